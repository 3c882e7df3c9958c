import pytest

from tools.base import tool
from tools.registry import ToolRegistry, build_registry, default_registry


def _make(name: str):
    def func() -> str:
        """Return a constant."""
        return name

    return tool(name=name)(func)


def test_it_finds_a_registered_tool_by_name():
    registry = ToolRegistry()
    alpha = _make("alpha")

    registry.register(alpha)

    assert registry.get("alpha") is alpha
    assert "alpha" in registry


def test_it_returns_none_for_an_unknown_name():
    assert ToolRegistry().get("missing") is None
    assert "missing" not in ToolRegistry()


def test_it_refuses_a_duplicate_name():
    registry = ToolRegistry([_make("alpha")])

    with pytest.raises(ValueError, match="already registered"):
        registry.register(_make("alpha"))


def test_it_lists_names_and_tools_sorted_by_name():
    registry = ToolRegistry([_make("beta"), _make("alpha")])

    assert registry.names() == ["alpha", "beta"]
    assert [t.name for t in registry.all()] == ["alpha", "beta"]


BUILTINS = ["calculator", "current_time", "fetch_url", "forget", "recall", "remember", "search_threads"]


def test_it_builds_the_default_registry_once():
    assert default_registry() is default_registry()


def test_it_registers_every_builtin_in_the_default_registry():
    assert default_registry().names() == BUILTINS


def test_it_documents_every_builtin():
    assert all(t.description and t.description.endswith(".") for t in build_registry().all())


def test_it_adds_the_tools_of_agentweb_tool_modules_to_the_default_registry():
    names = default_registry(("tests.tools.sample_tools",)).names()

    assert names == sorted([*BUILTINS, "shout", "word_count"])
