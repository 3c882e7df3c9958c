import pytest

from tools.loader import ToolModuleError, load_tool_modules, parse_module_list
from tools.registry import ToolRegistry, build_registry


def test_it_registers_every_tool_at_the_top_level_of_a_module():
    registry = ToolRegistry()

    added = load_tool_modules(["tests.tools.sample_tools"], registry)

    assert sorted(t.name for t in added) == ["calculator", "shout", "word_count"]
    assert registry.names() == ["calculator", "shout", "word_count"]


def test_it_skips_a_tool_that_is_already_registered_as_the_same_object():
    registry = build_registry()

    added = load_tool_modules("tests.tools.sample_tools", registry)

    assert sorted(t.name for t in added) == ["shout", "word_count"]


def test_it_names_a_module_that_does_not_exist():
    with pytest.raises(ToolModuleError, match=r"Cannot import tool module 'tests\.tools\.nowhere'"):
        load_tool_modules(["tests.tools.nowhere"], ToolRegistry())


def test_it_names_the_module_whose_import_fails_and_why():
    with pytest.raises(ToolModuleError, match=r"'tests\.tools\.sample_tools_broken'.*agentweb_no_such_dependency"):
        load_tool_modules(["tests.tools.sample_tools_broken"], ToolRegistry())


def test_it_names_the_module_whose_tool_takes_a_name_already_registered():
    with pytest.raises(ToolModuleError, match=r"'tests\.tools\.sample_tools_clash': A tool named 'calculator'"):
        build_registry("tests.tools.sample_tools_clash")


def test_it_reads_a_comma_separated_list_ignoring_blanks():
    assert parse_module_list(" a.b , ,c ") == ["a.b", "c"]
