"""The Anthropic Messages provider against a real local server speaking its SSE stream."""

import json
import ssl

import httpx
import pytest

from providers.anthropic import STREAM_ENDED_MID_CALL, AnthropicProvider
from providers.openai import OUT_OF_TOKENS
from providers.types import (
    ChatMessage,
    Finish,
    ModelError,
    ReasoningDelta,
    TextDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    ToolDefinition,
    Usage,
)
from tests.providers.test_openai import collect
from tests.support import vectors
from tests.support.model_server import ErrorResponse, ScriptedModelServer, SSEResponse, anthropic_sse_body

VECTORS_FILE = "anthropic_messages_sse.json"
VECTORS = vectors.cases(VECTORS_FILE)
SPLITS = ["whole", 21, 22]  # seeds for random byte splits
API_KEY = "sk-ant-test-SECRET-0123456789"
TLS = ssl.create_default_context()  # made once: building one per client costs ~70 ms a test
HELLO = [ChatMessage(role="user", content="Hello")]
STOP_REASONS = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@pytest.fixture
def server():
    with ScriptedModelServer() as s:
        yield s


@pytest.fixture
async def client():
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0), verify=TLS) as c:
        yield c


def provider_for(server, client, **kwargs):
    return AnthropicProvider(base_url=server.root_url, model="claude-test", client=client, **kwargs)


def sse(body, split):
    return SSEResponse(body) if split == "whole" else SSEResponse.split(body, seed=split, max_piece=89)


def events(*payloads):
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)


START = {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}
STOP = {"type": "message_stop"}


def delta(index, **body):
    return {"type": "content_block_delta", "index": index, "delta": body}


# --- every recorded stream -----------------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("vector", VECTORS)
async def test_vector(server, client, vector, split):
    expected = vector["expected"]
    server.enqueue(sse("\n".join(vector["input"]), split))

    got = await collect(provider_for(server, client))

    assert len(got.calls) == len(expected["tool_calls"])
    for call, want in zip(got.calls, expected["tool_calls"], strict=True):
        assert (call.id, call.name) == (want["id"], want["name"])
        if want.get("incomplete"):
            # anthropic-sse-003: the SDK salvages complete array items (arguments_partial_sdk, a QUIRK); an agent
            # must not run a call it never finished writing, so it is reported incomplete with no arguments.
            assert (call.args, call.error) == (None, OUT_OF_TOKENS)
        elif want.get("invalid_json"):
            assert call.args is None and call.raw == want["arguments_raw"]
            assert call.error.startswith("Arguments are not valid JSON")
        else:
            assert (call.args, call.error) == (want["arguments"], None)
    if vector["id"] == "anthropic-sse-005":
        # We differ deliberately: a refusal with no text shows the server's stop_details explanation as the
        # answer (as OpenAI's delta.refusal is shown), so the person does not see an empty reply.
        assert expected["text"] == ""
        assert got.text == expected["stop_details"]["explanation"]
    else:
        assert got.text == expected["text"]
    assert got.finish == STOP_REASONS[expected["stop_reason"]]


async def test_usage_counts_the_whole_prompt_and_the_final_output(server, client):
    vector = vectors.find(VECTORS_FILE, "anthropic-sse-001")
    server.enqueue(SSEResponse("\n".join(vector["input"])))
    got = await collect(provider_for(server, client))
    assert got.events[-2:] == [Usage(input_tokens=377, output_tokens=65), Finish("tool_calls")]
    assert got.of(ToolCallStart) == [ToolCallStart(1, "toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather")]


async def test_cached_prompt_tokens_are_part_of_the_input(server, client):
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3, "cache_read_input_tokens": 100}}}
    body = events(start, {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}})
    server.enqueue(SSEResponse(body + events(STOP)))
    got = await collect(provider_for(server, client))
    assert got.events == [Usage(103, 2), Finish("stop")]


# --- the request the server receives ---------------------------------------------------------


async def test_request_in_anthropic_shape(server, client):
    server.enqueue(SSEResponse(anthropic_sse_body(text="Both are sunny.")))
    messages = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="system", content="Use metric units."),
        ChatMessage(role="user", content="Weather in Paris and Oslo?"),
        ChatMessage(
            role="assistant",
            content="Checking both.",
            tool_calls=[
                ToolCallRequest(id="toolu_1", name="get_weather", args={"city": "Paris"}),
                ToolCallRequest(id="toolu_2", name="get_weather", args={"city": "Oslo"}),
            ],
        ),
        ChatMessage(
            role="tool", content='{"sky": "sunny"}', tool_call_id="toolu_1", name="get_weather", status="success"
        ),
        ChatMessage(role="tool", content="city not found", tool_call_id="toolu_2", name="get_weather", status="error"),
        ChatMessage(role="assistant", tool_calls=[ToolCallRequest("toolu_3", "get_weather", {"city": "Oslo, NO"})]),
        ChatMessage(
            role="tool", content='{"sky": "sunny"}', tool_call_id="toolu_3", name="get_weather", status="success"
        ),
        ChatMessage(role="user", content="And tomorrow?"),
    ]
    provider = provider_for(server, client, api_key=API_KEY, max_tokens=512, temperature=0.3)
    await collect(provider, messages, [WEATHER])

    [request] = server.requests
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == API_KEY
    assert request["headers"]["anthropic-version"] == "2023-06-01"
    assert request["headers"]["content-type"] == "application/json"
    assert "Authorization" not in request["headers"]
    assert request["json"] == {
        "model": "claude-test",
        "max_tokens": 512,
        "stream": True,
        "temperature": 0.3,
        "system": "Be brief.\n\nUse metric units.",
        "tools": [
            {"name": "get_weather", "description": "Current weather for a city.", "input_schema": WEATHER.parameters}
        ],
        "messages": [
            {"role": "user", "content": "Weather in Paris and Oslo?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking both."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Oslo"}},
                ],
            },
            {
                "role": "user",
                "content": [  # consecutive tool results: one user message
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"sky": "sunny"}', "is_error": False},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "city not found", "is_error": True},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_3", "name": "get_weather", "input": {"city": "Oslo, NO"}}
                ],
            },
            {
                "role": "user",
                "content": [  # a question right after a tool result joins its user turn, after the result
                    {"type": "tool_result", "tool_use_id": "toolu_3", "content": '{"sky": "sunny"}', "is_error": False},
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
    }


async def test_minimal_request_and_empty_turns_left_out(server, client):
    server.enqueue(SSEResponse(anthropic_sse_body(text="Hi")))
    messages = [
        ChatMessage(role="user", content="Hi"),
        ChatMessage(role="assistant"),
        ChatMessage(role="user", content="?"),
    ]
    await collect(provider_for(server, client), messages, [ToolDefinition("ping", "", {})])
    body = server.requests[0]["json"]
    assert body == {
        "model": "claude-test",
        "max_tokens": 4096,
        "stream": True,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "?"}]}],
        "tools": [{"name": "ping", "input_schema": {"type": "object"}}],
    }
    assert "x-api-key" not in server.requests[0]["headers"]


async def test_base_url_with_v1_and_label(server, client):
    server.enqueue(SSEResponse(anthropic_sse_body(text="ok")))
    provider = AnthropicProvider(base_url=server.root_url + "/v1/", model="claude-x", client=client)
    assert (await collect(provider)).text == "ok"
    assert server.requests[0]["path"] == "/v1/messages"
    assert provider.label == f"claude-x · {server.root_url}/v1/"
    assert AnthropicProvider(model="m").base_url == "https://api.anthropic.com"
    assert API_KEY not in repr(AnthropicProvider(model="m", api_key=API_KEY))


# --- stream handling ----------------------------------------------------------------------------


async def test_thinking_text_and_calls_from_the_helper_in_small_pieces(server, client):
    body = anthropic_sse_body(
        thinking="Paris first.",
        text="Looking.",
        tool_calls=[
            {"id": "toolu_a", "name": "get_weather", "arguments": {"city": "Zürich"}},
            {"id": "toolu_b", "name": "get_time", "arguments": ""},
        ],
    )
    server.enqueue(SSEResponse.split(body, seed=5, max_piece=7))
    got = await collect(provider_for(server, client), tools=[WEATHER])
    assert (got.reasoning, got.text) == ("Paris first.", "Looking.")
    assert got.calls == [
        ToolCallEnd(2, "toolu_a", "get_weather", json.dumps({"city": "Zürich"}), {"city": "Zürich"}),
        ToolCallEnd(3, "toolu_b", "get_time", "", {}),
    ]
    assert got.finish == "tool_calls"


async def test_max_tokens_after_a_closed_call_with_broken_json_is_out_of_tokens(server, client):
    call = {"type": "tool_use", "id": "toolu_z", "name": "get_weather", "input": {}}
    body = events(
        START,
        {"type": "content_block_start", "index": 0, "content_block": call},
        delta(0, type="input_json_delta", partial_json='{"city": "Par'),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 9}},
        STOP,
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert got.calls == [ToolCallEnd(0, "toolu_z", "get_weather", '{"city": "Par', None, OUT_OF_TOKENS)]
    assert got.finish == "length"


async def test_truncated_call_from_the_helper(server, client):
    body = anthropic_sse_body(
        text="Writing.",
        tool_calls=[{"id": "toolu_t", "name": "make_file", "arguments": '{"name": "a.t'}],
        stop_reason="max_tokens",
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert got.calls == [ToolCallEnd(1, "toolu_t", "make_file", '{"name": "a.t', None, OUT_OF_TOKENS)]
    assert (got.text, got.finish) == ("Writing.", "length")


async def test_a_call_never_closed_without_max_tokens_is_incomplete(server, client):
    call = {"type": "tool_use", "id": "toolu_q", "name": "f", "input": {}}
    body = events(
        START,
        {"type": "content_block_start", "index": 0, "content_block": call},
        delta(0, type="input_json_delta", partial_json='{"a": '),
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        STOP,
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert got.calls == [ToolCallEnd(0, "toolu_q", "f", '{"a": ', None, STREAM_ENDED_MID_CALL)]


async def test_whole_input_in_the_block_start_as_some_proxies_send_it(server, client):
    call = {"type": "tool_use", "id": "toolu_p", "name": "get_weather", "input": {"city": "Rome"}}
    body = events(
        START,
        {"type": "content_block_start", "index": 0, "content_block": call},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        STOP,
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert got.calls == [ToolCallEnd(0, "toolu_p", "get_weather", '{"city": "Rome"}', {"city": "Rome"})]


async def test_unknown_events_blocks_and_deltas_are_ignored(server, client):
    body = events(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "x"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        delta(1, type="citations_delta", citation={}),
        delta(1, type="text_delta", text="ok"),
        {"type": "content_block_stop", "index": 1},
        {"type": "some_future_event"},
        {"type": "message_delta", "delta": {"stop_reason": "pause_turn"}},
        STOP,
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert got.events == [TextDelta("ok"), Usage(5, 1), Finish("other")]


async def test_error_event_mid_stream_after_text(server, client):
    body = events(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        delta(0, type="text_delta", text="par"),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    server.enqueue(SSEResponse(body))
    seen = []
    with pytest.raises(ModelError) as caught:
        async for event in provider_for(server, client).stream(HELLO, []):
            seen.append(event)
    assert seen == [TextDelta("par")]
    assert str(caught.value) == f"The model server at {server.root_url} reported an error mid-stream: Overloaded"


async def test_a_stream_cut_before_message_stop_is_an_error(server, client):
    body = events(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        delta(0, type="text_delta", text="half an ans"),
    )
    server.enqueue(SSEResponse(body))
    seen = []
    with pytest.raises(ModelError, match=r"ended the answer early: .*\(no message_stop\)"):
        async for event in provider_for(server, client).stream(HELLO, []):
            seen.append(event)
    assert seen == [TextDelta("half an ans")]


async def test_a_stream_cut_after_its_stop_reason_is_a_complete_answer(server, client):
    # message_delta carries the stop reason and the last counts: all of the answer has come.
    body = events(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        delta(0, type="text_delta", text="whole"),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert (got.text, got.finish) == ("whole", "stop")


async def test_the_last_event_without_its_blank_line_is_read(server, client):
    body = events(
        START,
        delta(0, type="text_delta", text="ok"),
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        STOP,
    )
    server.enqueue(SSEResponse(body.rstrip("\n")))
    got = await collect(provider_for(server, client))
    assert (got.text, got.finish) == ("ok", "stop")


async def test_a_refusal_without_text_shows_the_servers_explanation(server, client):
    details = {"type": "refusal", "explanation": "This request goes against the usage policy."}
    body = events(START, {"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": details}}, STOP)
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert (got.text, got.finish) == ("This request goes against the usage policy.", "content_filter")


async def test_reasoning_from_a_thinking_block_start(server, client):
    body = events(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "Hm."}},
        delta(0, type="thinking_delta", thinking=" Yes."),
        delta(0, type="signature_delta", signature="abc"),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        STOP,
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert got.of(ReasoningDelta) == [ReasoningDelta("Hm."), ReasoningDelta(" Yes.")]


@pytest.mark.parametrize(
    ("status", "body", "phrase"),
    [
        (
            401,
            {"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key {API_KEY}"}},
            "401 Unauthorized: invalid x-api-key ***",
        ),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "529 Overloaded: Overloaded",
        ),
    ],
)
async def test_http_errors_name_the_server_and_never_the_key(server, client, status, body, phrase):
    server.enqueue(ErrorResponse(status, body))
    with pytest.raises(ModelError) as caught:
        await collect(provider_for(server, client, api_key=API_KEY))
    assert str(caught.value) == f"The model server at {server.root_url} answered {phrase}"


async def test_not_json_data(server, client):
    server.enqueue(SSEResponse("event: message_start\ndata: {oops\n\n"))
    with pytest.raises(ModelError, match=r"sent a stream event that is not JSON: '\{oops'"):
        await collect(provider_for(server, client))
