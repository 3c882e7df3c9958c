"""The morphXml parser beyond the vectors: what is a call, value typing, errors, reasoning."""

import pytest

from providers.protocols import XmlParser
from providers.protocols.prompts import xml_element
from providers.types import ToolCallArgsDelta, ToolCallEnd, ToolCallStart, ToolDefinition

from .support import chunkings, feed, outcome


def tool(name, properties=None, **extra):
    return ToolDefinition(name, "", {"type": "object", "properties": properties or {}, **extra})


WEATHER = tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})


def parse(text, *tools):
    return outcome(feed(XmlParser(list(tools) or [WEATHER]), [text]))


def test_the_call_starts_at_its_opening_tag_and_its_arguments_come_with_the_closing_one():
    parser = XmlParser([WEATHER])
    [text] = parser.feed("Let me check. <get_weath")
    assert text.text == "Let me check. "  # "<get_weath" is held back: it may be a call
    [start] = parser.feed("er>\n  <city>Seoul")
    assert isinstance(start, ToolCallStart) and start.name == "get_weather"
    delta, end = parser.feed("</city>\n</get_weather>")
    assert isinstance(delta, ToolCallArgsDelta) and isinstance(end, ToolCallEnd)
    assert end.args == {"city": "Seoul"}
    assert end.raw == delta.text == '{"city": "Seoul"}'


def test_only_declared_tools_are_calls():
    text = "Use <b>bold</b> and <search>x</search> or <get_weatherman/>."
    result = parse(text)
    assert (result.text, result.calls, result.errors) == (text, [], [])


def test_a_stray_closing_tag_of_a_tool_is_not_shown():
    assert parse("Done.</get_weather> Bye").text == "Done. Bye"


@pytest.mark.parametrize(
    ("schema", "written", "value"),
    [
        ({"type": "integer"}, "7", 7),
        ({"type": "integer"}, "7.5", "7.5"),  # left as text: the tool's validation tells the model
        ({"type": "number"}, "-0.25", -0.25),
        ({"type": "boolean"}, "False", False),
        ({"type": ["integer", "null"]}, "null", None),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "12", 12),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "twelve", "twelve"),
        ({"type": "string"}, "  a &amp; b &#60;3  ", "a & b <3"),
        ({"type": "string"}, "<![CDATA[ <raw> & kept ]]>", " <raw> & kept "),
        ({"type": "array", "items": {"type": "string"}}, "a, b", ["a, b"]),
        ({"type": "array", "items": {"type": "string"}}, '["a", "b"]', ["a", "b"]),
        ({"type": "array", "items": {"type": "boolean"}}, "true\nfalse", [True, False]),
        ({"type": "object"}, '{"a": [1]}', {"a": [1]}),
        ({"enum": ["x", "y"]}, "x", "x"),
        ({}, "3", 3),
        ({}, "Seoul", "Seoul"),
        ({"type": "object"}, "{'a': True, 'b': None}", {"a": True, "b": None}),  # a Python literal
        ({"type": "array", "items": {"type": "integer"}}, "<item>1</item><item>2</item>", [1, 2]),
    ],
)
def test_values_are_typed_by_the_schema(schema, written, value):
    result = parse(f"<t><v>{written}</v></t>", tool("t", {"v": schema}))
    assert result.calls == [("t", {"v": value})]


def test_objects_and_arrays_of_objects_come_from_child_elements():
    schema = {
        "filter": {"type": "object", "properties": {"min": {"type": "number"}, "tags": {"type": "array"}}},
        "rows": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    }
    text = "<q><filter><min>3</min><tags>a</tags><tags>b</tags></filter><rows><n>1</n></rows><rows><n>2</n></rows></q>"
    assert parse(text, tool("q", schema)).calls == [
        ("q", {"filter": {"min": 3, "tags": ["a", "b"]}, "rows": [{"n": 1}, {"n": 2}]})
    ]


def test_nested_elements_read_the_same_however_split():
    schema = {"filter": {"type": "object", "properties": {"min": {"type": "number"}, "tags": {"type": "array"}}}}
    text = "Look: <q><filter><min>3</min><tags>a</tags><tags>b</tags></filter></q>"
    for way, chunks in chunkings(text).items():
        result = outcome(feed(XmlParser([tool("q", schema)]), chunks))
        assert (result.text, result.calls) == ("Look: ", [("q", {"filter": {"min": 3, "tags": ["a", "b"]}})]), way


def test_an_element_left_open_is_closed_by_the_end_of_the_call():
    schema = {"filter": {"type": "object", "properties": {"min": {"type": "number"}}}}
    assert parse("<q><filter><min>3</min></q>", tool("q", schema)).calls == [("q", {"filter": {"min": 3}})]


def test_an_empty_parameter_tag_gives_an_empty_value():
    assert parse("<get_weather><city/><days>2</days></get_weather>").calls == [("get_weather", {"city": "", "days": 2})]


def test_a_tool_with_one_parameter_may_be_given_its_value_directly():
    assert parse("<get_time>Europe/Paris</get_time>", tool("get_time", {"zone": {"type": "string"}})).calls == [
        ("get_time", {"zone": "Europe/Paris"})
    ]


def test_what_the_prompt_shows_as_a_call_reads_back_as_the_same_arguments():
    schema = {
        "city": {"type": "string"},
        "days": {"type": "array", "items": {"type": "integer"}},
        "unit": {"type": "object", "properties": {"metric": {"type": "boolean"}, "digits": {"type": "number"}}},
    }
    args = {"city": "Seoul", "days": [1, 2, 3], "unit": {"metric": True, "digits": 1.5}}
    assert parse(xml_element("w", args), tool("w", schema)).calls == [("w", args)]
    assert parse(xml_element("w", {"days": [4]}), tool("w", schema)).calls == [("w", {"days": [4]})]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("<get_weather><city>Seoul</city>", "cut off before its closing tag </get_weather>"),
        ("<get_weather><days>1</days><days>2</days></get_weather>", "<days> is given 2 times"),
        (
            "<get_weather <city>x</city></get_weather>",
            "The opening tag <get_weather> is malformed: '<get_weather <city>'",
        ),
    ],
)
def test_a_call_that_cannot_be_read_ends_with_an_error_that_says_why(text, says):
    result = parse(text)
    assert (result.text, result.calls) == ("", [])
    [(name, error)] = result.errors
    assert name == "get_weather"
    assert says in error


def test_a_call_that_cannot_be_read_keeps_the_text_the_model_wrote():
    text = "<get_weather><days>1</days><days>2</days></get_weather>"
    [end] = [e for e in feed(XmlParser([WEATHER]), [f"Checking. {text} Done."]) if isinstance(e, ToolCallEnd)]
    assert (end.args, end.written) == (None, text)


def test_reasoning_is_separated_and_calls_inside_it_are_not_run():
    result = parse("<think>I could <get_weather><city>x</city></get_weather></think>\nNo need.")
    assert (result.reasoning, result.text, result.calls) == (
        "I could <get_weather><city>x</city></get_weather>",
        "No need.",
        [],
    )


def test_tool_names_with_regex_characters_are_matched_literally():
    weird = tool("a.b", {"x": {"type": "integer"}})
    assert parse("<a.b><x>1</x></a.b> <aXb/>", weird).calls == [("a.b", {"x": 1})]


def test_without_tools_everything_is_text():
    parser = XmlParser([])
    assert outcome(feed(parser, ["<get_weather/> hi"])).text == "<get_weather/> hi"
