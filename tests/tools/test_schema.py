import enum
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict, Union

import pydantic
import pytest

from tools.schema import InjectedArg, function_schema, type_schema


def test_it_uses_the_docstring_summary_as_description():
    def search(query: str) -> list[str]:
        """Search the
        knowledge base.

        Second paragraph.

        Args:
            query: What to look for.

        Returns:
            Matching titles.
        """

    description, _ = function_schema(search)

    assert description == "Search the knowledge base. Second paragraph."


def test_it_builds_the_top_level_object_with_required_parameters():
    def add(a: int, b: float) -> float:
        """Add."""

    _, parameters = function_schema(add)

    assert parameters == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    }


def test_it_keeps_required_present_when_empty():
    def nullary() -> None:
        """Nothing."""

    assert function_schema(nullary) == ("Nothing.", {"type": "object", "properties": {}, "required": []})


def test_it_takes_parameter_descriptions_from_the_args_section_joining_continuations():
    def search(query: str, top_k: int = 5) -> None:
        """Search.

        Args:
            query: The search query to use
                for finding things: important ones
            top_k (int): Number of results.
        """

    _, parameters = function_schema(search)

    assert (
        parameters["properties"]["query"]["description"] == "The search query to use for finding things: important ones"
    )
    assert parameters["properties"]["top_k"]["description"] == "Number of results."


def test_it_takes_descriptions_from_annotated_strings_over_the_docstring():
    def search(query: Annotated[str, "from Annotated"]) -> None:
        """Search.

        Args:
            query: from the docstring
        """

    _, parameters = function_schema(search)

    assert parameters["properties"]["query"] == {"type": "string", "description": "from Annotated"}


_NOT_JSON = object()


def test_it_makes_parameters_with_defaults_optional_and_records_the_default():
    def search(query: str, top_k: int = 5, when: Any = _NOT_JSON) -> None:
        """Search."""

    _, parameters = function_schema(search)

    assert parameters["required"] == ["query"]
    assert parameters["properties"]["top_k"] == {"type": "integer", "default": 5}
    assert "default" not in parameters["properties"]["when"]  # not JSON-serialisable


def test_it_maps_a_missing_annotation_to_any():
    def f(x) -> None:
        """F."""

    assert function_schema(f)[1]["properties"]["x"] == {}


def test_it_skips_self_args_kwargs_and_injected_parameters():
    class Service:
        def run(self, x: int, *args: int, user: Annotated[str, InjectedArg], **kwargs: str) -> None:
            """Run."""

    _, parameters = function_schema(Service.run)

    assert parameters["properties"] == {"x": {"type": "integer"}}
    assert parameters["required"] == ["x"]


def test_it_accepts_an_injected_marker_instance():
    def f(x: int, store: Annotated[dict, InjectedArg()]) -> None:
        """F."""

    assert list(function_schema(f)[1]["properties"]) == ["x"]


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (str, {"type": "string"}),
        (bool, {"type": "boolean"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list, {"type": "array"}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (dict[str, Any], {"type": "object"}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
        ),
    ],
    ids=["str", "bool", "list[int]", "bare list", "dict[str,int]", "dict[str,Any]", "set", "tuple-ellipsis", "tuple"],
)
def test_it_maps_builtin_types(hint, expected):
    assert type_schema(hint) == expected


@pytest.mark.parametrize(
    "hint",
    [Optional[int], int | None, Union[int, None]],  # noqa: UP007, UP045 - the old spellings are what is tested
    ids=["Optional", "pipe", "Union"],
)
def test_it_maps_optional_to_any_of_with_null(hint):
    assert type_schema(hint) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_it_maps_a_union_to_any_of():
    assert type_schema(int | str) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


def test_it_maps_literal_to_a_typed_enum():
    assert type_schema(Literal["bar", "baz"]) == {"enum": ["bar", "baz"], "type": "string"}


def test_it_leaves_the_type_out_of_a_mixed_literal():
    assert type_schema(Literal[1, "a"]) == {"enum": [1, "a"]}


def test_it_maps_an_enum_class_to_its_values():
    class Unit(enum.Enum):
        CELSIUS = "celsius"
        FAHRENHEIT = "fahrenheit"

    def weather(unit: Unit = Unit.CELSIUS) -> None:
        """Weather."""

    prop = function_schema(weather)[1]["properties"]["unit"]

    assert prop == {"enum": ["celsius", "fahrenheit"], "type": "string", "default": "celsius"}


def test_it_nests_a_typed_dict_as_an_object():
    class Address(TypedDict):
        street: Annotated[str, "Street and number"]
        zip: NotRequired[str]

    assert type_schema(Address) == {
        "type": "object",
        "properties": {"street": {"type": "string", "description": "Street and number"}, "zip": {"type": "string"}},
        "required": ["street"],
    }


def test_it_nests_a_dataclass_as_an_object_with_defaults():
    @dataclass
    class Point:
        x: float
        y: float = 0.0
        tags: list[str] = field(default_factory=list)

    assert type_schema(Point) == {
        "type": "object",
        "properties": {
            "x": {"type": "number"},
            "y": {"type": "number", "default": 0.0},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
    }


@dataclass
class _Node:
    name: str
    children: "list[_Node]"


def test_it_stops_at_a_recursive_type():
    schema = type_schema(_Node)

    assert schema["properties"]["children"] == {"type": "array", "items": {"type": "object"}}


def test_it_rejects_a_type_with_no_json_form_naming_the_parameter():
    def f(when: complex) -> None:
        """F."""

    with pytest.raises(TypeError, match="Parameter 'when' of f"):
        function_schema(f)


def test_it_rejects_mappings_with_non_string_keys():
    with pytest.raises(TypeError, match="keys must be str"):
        type_schema(dict[int, str])


def test_it_rejects_positional_only_parameters():
    def f(x: int, /) -> None:
        """F."""

    with pytest.raises(TypeError, match="positional-only"):
        function_schema(f)


def test_it_gives_empty_descriptions_without_a_docstring():
    def f(x: int): ...

    assert function_schema(f) == ("", {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})


class Nested(pydantic.BaseModel):
    nested_arg1: int = pydantic.Field(..., description="foo")
    title: str = "untitled"


class Tree(pydantic.BaseModel):
    """A tree."""

    label: str
    children: list["Tree"] = []


def test_it_inlines_a_pydantic_model_without_titles_or_refs():
    def plot(arg: Nested, others: list[Nested]) -> None:
        """Plot."""

    properties = function_schema(plot)[1]["properties"]

    nested = {
        "type": "object",
        "properties": {
            "nested_arg1": {"type": "integer", "description": "foo"},
            "title": {"type": "string", "default": "untitled"},  # a field named "title" is kept
        },
        "required": ["nested_arg1"],
    }
    assert properties == {"arg": nested, "others": {"type": "array", "items": nested}}


def test_it_stops_a_recursive_pydantic_model_where_it_recurses():
    schema = type_schema(Tree)

    assert schema["description"] == "A tree."
    assert schema["properties"]["children"] == {"type": "array", "items": {"type": "object"}, "default": []}


def test_it_reads_the_description_of_a_pydantic_field_in_annotated():
    def research(depth: Annotated[int, pydantic.Field(description="Search depth level")] = 3) -> None:
        """Research."""

    prop = function_schema(research)[1]["properties"]["depth"]

    assert prop == {"type": "integer", "description": "Search depth level", "default": 3}
