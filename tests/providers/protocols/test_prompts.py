"""Prompt assembly: the tools in the system prompt, earlier calls as markup, results as <tool_response>."""

import json
import re

import pytest

from providers.protocols import HermesParser, XmlParser, render_messages, system_prompt
from providers.types import ChatMessage, ToolCallRequest, ToolDefinition

from .support import feed, outcome

WEATHER = ToolDefinition(
    "get_weather",
    "Current weather for a city.",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "days": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["city"],
    },
)
TIME = ToolDefinition("current_time", "The time now.", {"type": "object", "properties": {}})
TOOLS = [WEATHER, TIME]
CALLS = [
    ToolCallRequest("call_1", "get_weather", {"city": "Seoul", "days": [1, 2]}),
    ToolCallRequest("call_2", "current_time", {}),
]
CONVERSATION = [
    ChatMessage("system", "You are terse."),
    ChatMessage("user", "Weather in Seoul, and the time?"),
    ChatMessage("assistant", "Checking both.", tool_calls=CALLS),
    ChatMessage("tool", '{"temp": 3, "sky": "clear"}', tool_call_id="call_1", name="get_weather", status="success"),
    ChatMessage("tool", "clock broke", tool_call_id="call_2", name="current_time", status="error"),
    ChatMessage("assistant", "3 °C and clear; the clock failed."),
    ChatMessage("user", "Thanks"),
]


def test_hermes_prompt_lists_the_tools_as_json_within_tools_tags_and_says_how_to_call():
    prompt = system_prompt("hermes", TOOLS)
    listed = json.loads(re.search(r"<tools>\n(.*)\n</tools>", prompt, re.DOTALL).group(1))
    assert listed == [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in TOOLS
    ]
    assert '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>' in prompt
    assert "<tool_response>" in prompt


def test_xml_prompt_describes_each_tool_and_the_element_format():
    prompt = system_prompt("xml", TOOLS)
    assert "name: get_weather\ndescription: Current weather for a city.\nparameters:\n" in prompt
    assert "  - city (string, required) - City name" in prompt
    assert '  - unit (string, optional) - enum: ["c", "f"]; default: "c"' in prompt
    assert "  - days (array<integer>, optional)" in prompt
    assert "schema: " + json.dumps(WEATHER.parameters) in prompt
    assert "name: current_time\ndescription: The time now.\nparameters:\n  (none)" in prompt
    assert "<example_function_name>" in prompt
    assert "tag name is the function name" in prompt


@pytest.mark.parametrize("protocol", ["hermes", "xml"])
def test_the_tools_join_the_existing_system_message_and_nothing_is_left_for_native_tool_calling(protocol):
    messages = render_messages(protocol, CONVERSATION, TOOLS)
    assert messages[0].role == "system"
    assert messages[0].content.startswith("You are terse.\n\n# Tools")
    assert system_prompt(protocol, TOOLS) in messages[0].content
    assert [m.role for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert all(not m.tool_calls and m.tool_call_id is None for m in messages)
    assert CONVERSATION[2].tool_calls == CALLS  # the caller's messages are left as they were


@pytest.mark.parametrize("protocol", ["hermes", "xml"])
def test_without_a_system_message_one_is_added_and_without_tools_none(protocol):
    assert render_messages(protocol, CONVERSATION[1:2], TOOLS)[0].role == "system"
    assert [m.role for m in render_messages(protocol, CONVERSATION[1:2], [])] == ["user"]


def test_earlier_calls_are_written_back_as_hermes_markup_the_parser_reads():
    assistant = render_messages("hermes", CONVERSATION, TOOLS)[2]
    assert assistant.content.startswith("Checking both.\n<tool_call>\n{")
    result = outcome(feed(HermesParser(), [assistant.content]))
    assert result.text == "Checking both.\n\n"
    assert result.calls == [(c.name, c.args) for c in CALLS]


def test_earlier_calls_are_written_back_as_xml_elements_the_parser_reads():
    assistant = render_messages("xml", CONVERSATION, TOOLS)[2]
    assert assistant.content == (
        "Checking both.\n<get_weather>\n  <city>Seoul</city>\n  <days>1</days>\n  <days>2</days>\n</get_weather>\n"
        "<current_time></current_time>"
    )
    assert outcome(feed(XmlParser(TOOLS), [assistant.content])).calls == [(c.name, c.args) for c in CALLS]


@pytest.mark.parametrize("protocol", ["hermes", "xml"])
def test_a_call_that_could_not_be_read_goes_back_as_the_model_wrote_it(protocol):
    written = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Seo}\n</tool_call>'
    call = ToolCallRequest("c1", "get_weather", {}, raw=written)
    messages = [ChatMessage(role="user", content="Weather?"), ChatMessage(role="assistant", tool_calls=[call])]
    assert render_messages(protocol, messages, TOOLS)[-1].content == written


def test_hermes_results_go_back_as_one_user_turn_of_tool_responses():
    results = render_messages("hermes", CONVERSATION, TOOLS)[3]
    assert results.role == "user"
    blocks = re.findall(r"<tool_response>\n(.*?)\n</tool_response>", results.content)
    assert [json.loads(b) for b in blocks] == [
        {"name": "get_weather", "content": {"temp": 3, "sky": "clear"}},
        {"name": "current_time", "content": "clock broke", "status": "error"},
    ]


def test_xml_results_go_back_with_tool_name_and_result_elements():
    results = render_messages("xml", CONVERSATION, TOOLS)[3]
    assert results.role == "user"
    assert results.content == (
        "<tool_response>\n  <tool_name>get_weather</tool_name>\n"
        '  <result>{"temp": 3, "sky": "clear"}</result>\n</tool_response>\n'
        "<tool_response>\n  <tool_name>current_time</tool_name>\n  <status>error</status>\n"
        "  <result>clock broke</result>\n</tool_response>"
    )


def test_an_unknown_protocol_is_refused():
    with pytest.raises(ValueError, match="hermes, xml"):
        render_messages("yaml", CONVERSATION, TOOLS)
