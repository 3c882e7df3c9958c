"""The morphXml parser beyond the vectors: what is a call, value typing, errors, reasoning."""

import pytest

from providers.protocols import XmlParser
from providers.protocols.prompts import tool_response, xml_element, xml_system_prompt
from providers.types import ChatMessage, ToolCallArgsDelta, ToolCallEnd, ToolCallStart, ToolDefinition

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


# What the xml prompt shows the model (prompts.xml_system_prompt, prompts.tool_response): a small model copies it.
COPIED = (
    "The weather is in.\n<tool_response>\n  <tool_name>get_weather</tool_name>\n  <status>error</status>\n"
    "  <result>3 degrees</result>\n</tool_response>\nIt is 3 degrees in Seoul.\n"
    "<tools>\nname: get_weather\nparameters:\n  - city (string, required)\n</tools>\n"
    "<rules>\n- To call a function, write one XML element.\n</rules>\n"
    "<example_function_name>\n  <example_parameter_1>value_1</example_parameter_1>\n</example_function_name>\n"
    "Anything else?</tool_response></rules>"
)


@pytest.mark.parametrize("way", list(chunkings(COPIED)))
def test_blocks_of_the_prompt_a_model_copies_into_its_answer_are_never_shown(way):
    # The tool results it was given, the tool list, the rules and the example call: contents and tags are left out,
    # as is a stray closing tag, however the text is cut.
    got = outcome(feed(XmlParser([WEATHER]), chunkings(COPIED)[way]))
    assert got.text == "The weather is in.\nIt is 3 degrees in Seoul.\nAnything else?"
    assert got.calls == [] and got.errors == []


def test_a_copied_block_that_never_closes_is_left_out_to_the_end():
    got = outcome(feed(XmlParser([WEATHER]), ["Done. <tool_resp", "onse>\n  <result>4", "37"]))
    assert got.text == "Done. "


def test_a_copied_block_around_a_call_hides_the_call_with_it():
    # The model repeats an earlier turn, result and all: the call inside the copied result is not run again.
    text = "<tool_response>\n  <result><get_weather><city>Seoul</city></get_weather></result>\n</tool_response>Hi"
    assert (parse(text).text, parse(text).calls) == ("Hi", [])


def test_a_tool_named_like_a_prompt_block_is_still_called():
    rules = tool("rules", {"topic": {"type": "string"}})
    got = parse("<rules><topic>chess</topic></rules>", rules)
    assert got.calls == [("rules", {"topic": "chess"})]


def test_a_model_that_copies_its_whole_prompt_shows_none_of_the_prompts_tags():
    result = ChatMessage(role="tool", content="3 degrees", name="get_weather", status="error")
    copied = f"{xml_system_prompt([WEATHER])}\n{tool_response('xml', result)}\nIt is 3 degrees."
    for way, chunks in chunkings(copied).items():
        got = outcome(feed(XmlParser([WEATHER]), chunks))
        assert "<" not in got.text and ">" not in got.text, way
        assert got.text.endswith("It is 3 degrees.") and got.calls == [] and got.errors == []
