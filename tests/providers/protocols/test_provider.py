"""TextProtocolProvider and NativeLeakGuardProvider, end to end.

Most tests wrap a small provider that yields text pieces: the wrapped provider is the protocol's
boundary (a text stream in, neutral events out), not HTTP. The last tests go through the real
OpenAIProvider against a real local server whose stream carries the markup as plain content.
"""

import json

import httpx
import pytest

from providers.openai import OpenAIProvider
from providers.protocols import NativeLeakGuardProvider, TextProtocolProvider
from providers.types import (
    ChatMessage,
    Finish,
    ModelError,
    ReasoningDelta,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    ToolDefinition,
    Usage,
)
from tests.support.model_server import ScriptedModelServer, SSEResponse, openai_sse_body

from .support import check_call_events, outcome

WEATHER = ToolDefinition(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ASK = [ChatMessage("system", "Be brief."), ChatMessage("user", "Weather in Seoul?")]
HERMES_REPLY = 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Seoul"}}\n</tool_call>'


class TextModel:
    """A provider that answers with the given text pieces (and records what it was asked)."""

    label = "text-model · http://127.0.0.1:1/v1"
    is_demo = False

    def __init__(self, *pieces, finish="stop", before=(), fail_after=None):
        self.pieces = pieces
        self.finish = finish
        self.before = before
        self.fail_after = fail_after
        self.calls: list[tuple[list[ChatMessage], list[ToolDefinition]]] = []

    async def stream(self, messages, tools):
        self.calls.append((messages, tools))
        for event in self.before:
            yield event
        for number, piece in enumerate(self.pieces):
            if number == self.fail_after:
                raise ModelError("The model server at http://127.0.0.1:1/v1 broke the connection.")
            yield TextDelta(piece) if isinstance(piece, str) else piece
        yield Usage(input_tokens=12, output_tokens=7)
        yield Finish(self.finish)


async def collect(provider, messages=ASK, tools=(WEATHER,), generated_ids=True):
    events = [event async for event in provider.stream(list(messages), list(tools))]
    check_call_events(events, generated_ids=generated_ids)
    return events


def pieces(text, size=5):
    return [text[i : i + size] for i in range(0, len(text), size)]


# --- TextProtocolProvider --------------------------------------------------------------------


async def test_hermes_reply_becomes_call_events_and_finish_says_tool_calls():
    inner = TextModel(*pieces(HERMES_REPLY))
    events = await collect(TextProtocolProvider(inner, "hermes"))
    result = outcome(events)
    assert result.text == "Let me check.\n"
    assert result.calls == [("get_weather", {"city": "Seoul"})]
    assert events[-2:] == [Usage(input_tokens=12, output_tokens=7), Finish("tool_calls")]
    [(messages, tools)] = inner.calls
    assert tools == []
    assert "<tools>" in messages[0].content and messages[0].content.startswith("Be brief.")


async def test_xml_reply_becomes_call_events():
    inner = TextModel(*pieces("Checking.\n<get_weather>\n  <city>Seoul</city>\n</get_weather>", 3))
    result = outcome(await collect(TextProtocolProvider(inner, "xml")))
    assert (result.text, result.calls) == ("Checking.\n", [("get_weather", {"city": "Seoul"})])
    assert "<get_weather>" not in result.text


async def test_a_plain_answer_streams_through_and_finishes_with_stop():
    inner = TextModel("The weather ", "is fine.")
    events = await collect(TextProtocolProvider(inner, "hermes"))
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("The weather "), TextDelta("is fine.")]
    assert events[-1] == Finish("stop")


async def test_the_history_goes_to_the_model_as_text_in_the_protocol():
    history = [
        *ASK,
        ChatMessage("assistant", "", tool_calls=[ToolCallRequest("call_1", "get_weather", {"city": "Seoul"})]),
        ChatMessage("tool", "sunny", tool_call_id="call_1", name="get_weather", status="success"),
    ]
    inner = TextModel("Sunny.")
    await collect(TextProtocolProvider(inner, "hermes"), history)
    sent = inner.calls[0][0]
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2].content == '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Seoul"}}\n</tool_call>'
    assert json.loads(sent[3].content.split("\n")[1]) == {"name": "get_weather", "content": "sunny"}


async def test_a_call_cut_off_by_the_length_limit_ends_before_finish_with_an_error():
    inner = TextModel('<tool_call>{"name": "get_weather", "arguments": {"ci', finish="length")
    events = await collect(TextProtocolProvider(inner, "hermes"))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.args is None and "incomplete" in end.error
    assert events.index(end) < len(events) - 1
    assert events[-1] == Finish("length")


async def test_reasoning_from_the_server_and_from_think_tags_both_come_out_as_reasoning():
    inner = TextModel("<think>Check weather.</think>", *pieces(HERMES_REPLY), before=[ReasoningDelta("Hmm. ")])
    events = await collect(TextProtocolProvider(inner, "hermes"))
    assert outcome(events).reasoning == "Hmm. Check weather."


async def test_reasoning_open_is_for_models_whose_template_opens_think():
    inner = TextModel("Let me think.</think>", "It is sunny.")
    result = outcome(await collect(TextProtocolProvider(inner, "hermes", reasoning_open=True)))
    assert (result.reasoning, result.text) == ("Let me think.", "It is sunny.")


async def test_label_and_demo_flag_are_the_inner_providers():
    provider = TextProtocolProvider(TextModel(), "xml")
    assert (provider.label, provider.is_demo) == (TextModel.label, False)


async def test_a_model_error_mid_stream_propagates():
    inner = TextModel("Let me ", "check", fail_after=1)
    with pytest.raises(ModelError, match="broke the connection"):
        await collect(TextProtocolProvider(inner, "hermes"))


def test_an_unknown_protocol_is_refused():
    with pytest.raises(ValueError, match="use one of: hermes, xml"):
        TextProtocolProvider(TextModel(), "json")


# --- NativeLeakGuardProvider -----------------------------------------------------------------


def native_call(index, call_id, name, args):
    raw = json.dumps(args)
    return [
        ToolCallStart(index, call_id, name),
        ToolCallArgsDelta(index, raw),
        ToolCallEnd(index, call_id, name, raw, args),
    ]


async def test_a_leaked_block_is_run_as_a_call_and_noted():
    inner = TextModel(*pieces(HERMES_REPLY, 4))
    provider = NativeLeakGuardProvider(inner)
    events = await collect(provider)
    result = outcome(events)
    assert result.calls == [("get_weather", {"city": "Seoul"})]
    assert result.text == "Let me check.\n"
    assert events[-1] == Finish("tool_calls")
    assert inner.calls[0][1] == [WEATHER]  # native: the tools go to the server as they are
    [note] = provider.take_notes()
    assert "1 tool call(s) as <tool_call> text" in note and "--tool-call-parser" in note
    assert provider.take_notes() == []


async def test_native_and_leaked_calls_are_numbered_together():
    inner = TextModel(
        *native_call(0, "call_native", "get_weather", {"city": "Paris"}),
        *pieces(HERMES_REPLY),
        finish="tool_calls",
    )
    events = await collect(NativeLeakGuardProvider(inner), generated_ids=False)
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.name) for s in starts] == [(0, "get_weather"), (1, "get_weather")]
    assert starts[0].id == "call_native"
    calls = outcome(events, generated_ids=False).calls
    assert calls == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Seoul"})]


async def test_text_without_a_block_comes_through_unchanged_and_leaves_no_note():
    text = "Use <tool_call> tags? No: a < b, and </tool_call> is just text here."
    provider = NativeLeakGuardProvider(TextModel(*pieces(text, 3)))
    events = await collect(provider)
    assert outcome(events).text == text
    assert events[-1] == Finish("stop")
    assert provider.notes == []


async def test_without_tools_only_reasoning_is_separated():
    provider = NativeLeakGuardProvider(TextModel("<think>hm</think>", HERMES_REPLY))
    result = outcome(await collect(provider, tools=()))
    assert (result.reasoning, result.calls) == ("hm", [])
    assert "<tool_call>" in result.text


# --- through the real OpenAI-compatible provider and a real server ----------------------------


@pytest.fixture
def server():
    with ScriptedModelServer() as s:
        yield s


@pytest.fixture
async def client():
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0)) as c:
        yield c


@pytest.mark.parametrize("seed", [None, 5, 6])
async def test_hermes_through_a_real_openai_compatible_server(server, client, seed):
    body = openai_sse_body(text="<think>Weather, so call the tool.</think>\n" + HERMES_REPLY, chunk_text=4)
    server.enqueue(SSEResponse(body) if seed is None else SSEResponse.split(body, seed=seed, max_piece=40))
    inner = OpenAIProvider(base_url=server.base_url, model="plain-model", client=client)
    provider = TextProtocolProvider(inner, "hermes")

    events = await collect(provider)

    result = outcome(events)
    assert result.reasoning == "Weather, so call the tool."
    assert result.text == "Let me check.\n"
    assert result.calls == [("get_weather", {"city": "Seoul"})]
    assert events[-1] == Finish("tool_calls")
    request = server.requests[0]["json"]
    assert "tools" not in request
    assert request["messages"][0]["role"] == "system"
    assert "<tools>" in request["messages"][0]["content"]
    assert provider.label == f"plain-model · {server.base_url}"


async def test_a_leak_through_a_real_server_without_its_tool_parser(server, client):
    server.enqueue(SSEResponse.split(openai_sse_body(text=HERMES_REPLY, chunk_text=3), seed=9, max_piece=40))
    provider = NativeLeakGuardProvider(OpenAIProvider(base_url=server.base_url, model="m", client=client))

    result = outcome(await collect(provider))

    assert result.calls == [("get_weather", {"city": "Seoul"})]
    assert server.requests[0]["json"]["tools"][0]["function"]["name"] == "get_weather"
    assert len(provider.take_notes()) == 1
