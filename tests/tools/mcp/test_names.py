import re

from tools.mcp.names import server_prefix, tool_name

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_a_name_that_fits_is_kept():
    assert tool_name("files", "read_file") == "files__read_file"


def test_a_long_name_is_cut_to_64_with_a_stable_suffix():
    name = tool_name("files", "x" * 80)
    assert VALID.match(name) and len(name) == 64
    assert name == tool_name("files", "x" * 80)
    assert name != tool_name("files", "x" * 79)
    assert name.startswith(server_prefix("files"))


def test_replaced_characters_get_a_suffix_so_names_stay_apart():
    dotted, dashed = tool_name("files", "read.file"), tool_name("files", "read_file")
    assert VALID.match(dotted) and dotted.startswith("files__read_file_") and dotted != dashed
    assert tool_name("files", "read file") != dotted
