from tools.docstring import parse_docstring


def test_it_returns_empty_parts_for_no_docstring():
    doc = parse_docstring(None)

    assert (doc.summary, doc.args) == ("", {})


def test_it_reads_a_lower_case_header_with_no_blank_line_before_it():
    doc = parse_docstring("""Add two numbers together.
    args:
        x (integer): The first number
        y (integer, optional): The second number

    Returns:
        integer: The sum of x and y
    """)

    assert doc.summary == "Add two numbers together."
    assert doc.args == {"x": "The first number", "y": "The second number"}


def test_it_does_not_read_the_returns_section_as_arguments():
    doc = parse_docstring("Do work.\n\nArgs:\n    x: The x value\n\nReturns:\n    result: yes\n")

    assert doc.args == {"x": "The x value"}


def test_it_treats_deeper_indented_colon_lines_as_continuations():
    doc = parse_docstring(
        "Do.\n\nArgs:\n    config: format\n        key1: value1\n        key2: value2\n    verbose: Loud"
    )

    assert doc.args == {"config": "format key1: value1 key2: value2", "verbose": "Loud"}


def test_it_accepts_a_type_glued_to_the_name_and_spaces_around_the_colon():
    doc = parse_docstring("F.\nArgs:\n    a(integer) : First (:thing) number\n    b(integer) :Second number")

    assert doc.args == {"a": "First (:thing) number", "b": "Second number"}


def test_it_skips_blank_lines_between_entries():
    doc = parse_docstring(
        "F.\nArgs:\n    x (integer): : The first\n\n\n    y (integer ): The second\nReturns:\n    int"
    )

    assert doc.args == {"x": ": The first", "y": "The second"}


def test_it_strips_stars_from_variadic_names():
    doc = parse_docstring("F.\n\nArgs:\n    *args: Positional.\n    **kwargs: Named.")

    assert doc.args == {"args": "Positional.", "kwargs": "Named."}
