import asyncio

import pytest
from jsonschema.exceptions import SchemaError

from tools.base import Tool, tool


def greet(name: str, punctuation: str = "!") -> str:
    """Greet someone by name.

    Args:
        name: Who to greet.
        punctuation: What ends the greeting.
    """
    return f"Hello, {name}{punctuation}"


def test_it_builds_a_tool_from_a_bare_decorator():
    made = tool(greet)

    assert isinstance(made, Tool)
    assert made.name == "greet"
    assert made.description == "Greet someone by name."
    assert made.parameters["required"] == ["name"]
    assert made.parameters["properties"]["name"] == {"type": "string", "description": "Who to greet."}


def test_it_builds_a_tool_from_an_empty_call():
    assert tool()(greet).name == "greet"


def test_it_uses_the_defaults_for_flags():
    made = tool(greet)

    assert (made.requires_approval, made.return_direct, made.timeout, made.is_async) == (False, False, 30.0, False)


def test_it_applies_the_options_given():
    made = tool(name="say_hi", description="Say hi.", requires_approval=True, return_direct=True, timeout=2.5)(greet)

    assert (made.name, made.description) == ("say_hi", "Say hi.")
    assert (made.requires_approval, made.return_direct, made.timeout) == (True, True, 2.5)


def test_it_lets_explicit_parameters_override_the_generated_schema():
    schema = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}

    made = tool(parameters=schema)(greet)

    assert made.parameters == schema
    assert made.description == "Greet someone by name."


def test_it_does_not_read_type_hints_when_parameters_are_given():
    def odd(when: complex) -> str:  # no JSON form, would make function_schema raise
        """Odd."""
        return str(when)

    assert tool(parameters={"type": "object", "properties": {}})(odd).name == "odd"


def test_it_keeps_the_decorated_function_callable():
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert add(2, b=3) == 5


def test_it_detects_an_async_function():
    @tool
    async def fetch(url: str) -> str:
        """Fetch."""
        return url

    assert fetch.is_async is True
    assert asyncio.run(fetch("x")) == "x"


def test_it_is_frozen():
    made = tool(greet)

    with pytest.raises(AttributeError):
        made.name = "other"


@pytest.mark.parametrize("bad_name", ["has space", "", "a" * 65, "dotted.name"])
def test_it_rejects_names_providers_refuse(bad_name):
    with pytest.raises(ValueError, match="Invalid tool name"):
        tool(name=bad_name)(greet)


def test_it_rejects_a_non_positive_timeout():
    with pytest.raises(ValueError, match="timeout must be positive"):
        tool(timeout=0)(greet)


def test_it_rejects_a_parameters_schema_that_is_not_an_object():
    with pytest.raises(ValueError, match="type 'object'"):
        tool(parameters={"type": "string"})(greet)


def test_it_rejects_an_invalid_json_schema():
    with pytest.raises(SchemaError):
        tool(parameters={"type": "object", "properties": {"x": {"type": "no-such-type"}}})(greet)


def test_it_takes_the_name_positionally_as_langchain_does():
    renamed = tool("salute")(greet)

    assert renamed.name == "salute"


def test_it_refuses_a_name_given_twice():
    with pytest.raises(TypeError, match="name once"):
        tool("salute", name="hello")


def test_it_refuses_something_that_is_neither_a_function_nor_a_name():
    with pytest.raises(TypeError, match="a function or a name"):
        tool(42)
