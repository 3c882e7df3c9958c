"""The Hermes parser beyond the vectors: event timing, argument streaming, errors, leak mode, reasoning."""

import json

import pytest

from providers.protocols import HermesParser
from providers.types import ReasoningDelta, TextDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart

from .support import chunkings, feed, outcome

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Seoul", "days": [1, 2]}}\n</tool_call>'


def test_it_starts_the_call_as_soon_as_the_name_is_read():
    parser = HermesParser()
    assert parser.feed('<tool_call>{"name": "get_wea') == []
    [start] = parser.feed('ther", "argu')
    assert isinstance(start, ToolCallStart)
    assert (start.index, start.name) == (0, "get_weather")


def test_it_streams_the_arguments_text_as_it_comes():
    parser = HermesParser()
    events = parser.feed('<tool_call>{"name": "get_weather", "arguments": {"ci')
    events += parser.feed('ty": "Se')
    events += parser.feed('oul"}}</tool_call>')
    deltas = [e.text for e in events if isinstance(e, ToolCallArgsDelta)]
    assert deltas == ['{"ci', 'ty": "Se', 'oul"}']
    [end] = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.raw == '{"city": "Seoul"}'
    assert end.args == {"city": "Seoul"}


def test_arguments_written_before_the_name_go_out_in_one_piece_once_the_name_comes():
    events = feed(HermesParser(), ['<tool_call>{"arguments": {"a": 1}, ', '"name": "x"}</tool_call>'])
    assert [type(e).__name__ for e in events] == ["ToolCallStart", "ToolCallArgsDelta", "ToolCallEnd"]
    assert events[1].text == '{"a": 1}'
    assert events[2].args == {"a": 1}


def test_parameters_is_read_as_arguments_and_missing_arguments_mean_none():
    result = outcome(
        feed(
            HermesParser(),
            ['<tool_call>{"name": "a", "parameters": {"x": 1}}</tool_call><tool_call>{"name": "b"}</tool_call>'],
        )
    )
    assert result.calls == [("a", {"x": 1}), ("b", {})]


@pytest.mark.parametrize(
    ("body", "name", "says"),
    [
        ('{"arguments": {}}', "", 'no "name"'),
        ('{"name": "x", "arguments": [1, 2]}', "x", "must be a JSON object"),
        ('{"name": "x", "arguments": "not json"}', "x", "must be a JSON object"),
        ("get_weather(city='Seoul')", "", "not a JSON object"),
        ("", "", "empty"),
        ('{"name": "x", "arguments": {"a": 1}', "x", "incomplete before </tool_call>"),
        ('{"name": "x", "arguments": {"a": tru}}', "x", "not valid JSON (Expecting value"),
    ],
)
def test_a_block_that_is_not_a_call_ends_with_an_error_that_says_how_to_write_one(body, name, says):
    result = outcome(feed(HermesParser(), [f"Sure. <tool_call>{body}</tool_call> Done."]))
    assert result.text == "Sure.  Done."
    assert result.calls == []
    [(error_name, error)] = result.errors
    assert error_name == name
    assert says in error
    assert "<tool_call>" in error  # the way to write it, for the model to try again


@pytest.mark.parametrize(
    ("body", "args"),
    [
        ('{"name":"f","arguments":{"a":1},"id":7}', {"a": 1}),  # compact, a number last
        ('{"arguments":{"a":1},"name":"f","strict":true}', {"a": 1}),
        ('{"arguments":null, "name":"f"}', {}),
        ('{"name": "f", "arguments": "{\\"city\\": \\"Paris\\"}"}', {"city": "Paris"}),  # a JSON string
        # Two slips models make, repaired: a raw newline inside a string, an escape JSON does not know.
        ('{"name": "f", "arguments": {"text": "a\nb", "price": "\\$5"}}', {"text": "a\nb", "price": "$5"}),
    ],
)
def test_calls_written_in_other_ways_json_allows_or_models_slip_into_read_the_same_however_split(body, args):
    for way, chunks in chunkings(f"<tool_call>{body}</tool_call>").items():
        result = outcome(feed(HermesParser(), chunks))
        assert (result.calls, result.errors) == ([("f", args)], []), way


def test_in_an_array_of_calls_each_call_stands_on_its_own():
    result = outcome(
        feed(HermesParser(), ['<tool_call>[{"name": "a", "arguments": {}}, {"arguments": {}}]</tool_call>'])
    )
    assert result.calls == [("a", {})]
    assert [name for name, _ in result.errors] == [""]


def test_a_stray_closing_tag_in_the_text_is_not_shown():
    assert outcome(feed(HermesParser(), ["Done.</tool_call> Bye"])).text == "Done. Bye"


def test_calls_are_numbered_in_order_with_fresh_ids():
    events = feed(HermesParser(), [CALL + " and " + CALL])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.index for s in starts] == [0, 1]
    assert starts[0].id != starts[1].id
    assert HermesParser().calls_ended == 0


def test_feeding_after_close_is_a_mistake():
    parser = HermesParser()
    parser.close()
    with pytest.raises(RuntimeError):
        parser.feed("x")


# --- reasoning ----------------------------------------------------------------------------------


def test_reasoning_is_separated_and_the_layout_around_it_dropped():
    events = feed(HermesParser(), ["<think>\nThe user wants weather.\n</think>\n\nLet me check.", CALL])
    result = outcome(events)
    assert result.reasoning == "The user wants weather.\n"
    assert result.text == "Let me check."
    assert result.calls == [("get_weather", {"city": "Seoul", "days": [1, 2]})]
    assert isinstance(events[0], ReasoningDelta)


def test_a_reply_that_starts_inside_reasoning_needs_reasoning_open():
    text = "Thinking it over.</think>The answer."
    assert outcome(feed(HermesParser(reasoning_open=True), [text])).key()[:2] == ("The answer.", "Thinking it over.")
    # Without it the reasoning cannot be told from the answer once shown; only the stray tag is dropped.
    assert outcome(feed(HermesParser(), [text])).key()[:2] == ("Thinking it over.The answer.", "")


def test_calls_drafted_inside_reasoning_are_not_run():
    result = outcome(feed(HermesParser(), ["<think>maybe " + CALL + "</think>No call needed."]))
    assert result.calls == []
    assert result.text == "No call needed."
    assert "<tool_call>" in result.reasoning


def test_think_tags_inside_an_argument_are_content():
    body = json.dumps({"name": "note", "arguments": {"text": "<think>x</think>"}})
    result = outcome(feed(HermesParser(), list(f"<tool_call>{body}</tool_call>")))
    assert result.calls == [("note", {"text": "<think>x</think>"})]
    assert result.reasoning == ""


def test_reasoning_can_be_left_in_the_text():
    assert outcome(feed(HermesParser(split_think=False), ["<think>a</think>b"])).text == "<think>a</think>b"


# --- leak mode (native tool calling) ---------------------------------------------------------


def test_leak_mode_turns_a_complete_block_into_a_call_and_counts_it():
    parser = HermesParser(leak_mode=True)
    result = outcome(feed(parser, ["Let me look.\n", CALL]))
    assert result.calls == [("get_weather", {"city": "Seoul", "days": [1, 2]})]
    assert result.text == "Let me look.\n"
    assert parser.blocks_found == 1


@pytest.mark.parametrize(
    "text",
    [
        "Use <tool_call>name</tool_call> to call.",
        'Like <tool_call>{"name": "x", "arguments": {}} and then</tool_call> ok',
        "Bye </tool_call> then",
        '<tool_call>{"name": "x", "arg',
    ],
)
def test_leak_mode_gives_back_anything_that_is_not_a_call_as_it_was(text):
    parser = HermesParser(leak_mode=True)
    for chunks in ([text], list(text)):
        parser = HermesParser(leak_mode=True)
        result = outcome(feed(parser, chunks))
        assert (result.text, result.calls, result.errors) == (text, [], [])
        assert parser.blocks_found == 0 and parser.calls_ended == 0


def test_leak_mode_numbers_calls_without_gaps_after_a_block_given_back():
    events = feed(HermesParser(leak_mode=True), ["<tool_call>oops</tool_call>", CALL])
    assert [e.index for e in events if isinstance(e, ToolCallStart)] == [0]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "<tool_call>oops</tool_call>"


COPIED = (
    'The result is in.\n<tool_response>\n{"name": "calculator", "content": "437"}\n</tool_response>\n'
    '23 times 19 is 437.\n<tools>\n[{"type": "function"}]\n</tools>\nAnything else?</tool_response>'
)


@pytest.mark.parametrize("way", list(chunkings(COPIED)))
def test_blocks_of_the_prompt_a_model_copies_into_its_answer_are_never_shown(way):
    # A small model repeats the <tool_response> it was given and the <tools> list: contents and tags are left out,
    # as is a stray closing tag, however the text is cut.
    got = outcome(feed(HermesParser(), chunkings(COPIED)[way]))
    assert got.text == "The result is in.\n23 times 19 is 437.\nAnything else?"
    assert got.calls == [] and got.errors == []


def test_a_copied_block_that_never_closes_is_left_out_to_the_end():
    got = outcome(feed(HermesParser(), ["Done. <tool_resp", 'onse>\n{"content": "4', "37"]))
    assert got.text == "Done. "


def test_in_leak_mode_the_prompt_blocks_are_text():
    # Native tool calling: the model was never shown these tags, so what it writes with them is its own.
    got = outcome(feed(HermesParser(leak_mode=True), ["Use <tools>x</tools> here."]))
    assert got.text == "Use <tools>x</tools> here."
