import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from providers.openai import OpenAIProvider
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
from tests.support import vectors
from tests.support.model_server import ErrorResponse, Hang, ScriptedModelServer, SSEResponse, openai_sse_body

ROOT = Path(__file__).resolve().parents[2]
VECTORS = vectors.cases("openai_chat_completions_sse.json")
SPLITS = ["whole", 11, 12]  # seeds for random byte splits
API_KEY = "sk-test-SECRET-0123456789"
HELLO = [ChatMessage(role="user", content="Hello")]
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@dataclass
class Collected:
    events: list = field(default_factory=list)

    def of(self, kind):
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def text(self):
        return "".join(e.text for e in self.of(TextDelta))

    @property
    def reasoning(self):
        return "".join(e.text for e in self.of(ReasoningDelta))

    @property
    def calls(self):
        return self.of(ToolCallEnd)

    @property
    def finish(self):
        return self.events[-1].reason


@pytest.fixture
def server():
    with ScriptedModelServer() as s:
        yield s


@pytest.fixture
async def client():
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0)) as c:
        yield c


async def collect(provider, messages=HELLO, tools=()):
    got = Collected()
    async for event in provider.stream(list(messages), list(tools)):
        got.events.append(event)
    check_event_order(got.events)
    return got


def check_event_order(events):
    """The Provider contract: starts before their deltas and ends, every start ended, Finish last, usage once."""
    assert isinstance(events[-1], Finish)
    assert sum(isinstance(e, Finish) for e in events) == 1
    assert sum(isinstance(e, Usage) for e in events) <= 1
    started, ended, args = {}, set(), {}
    for event in events:
        if isinstance(event, ToolCallStart):
            assert event.index not in started
            started[event.index] = event
            args[event.index] = ""
        elif isinstance(event, ToolCallArgsDelta):
            assert event.index in started and event.index not in ended and event.text
            args[event.index] += event.text
        elif isinstance(event, ToolCallEnd):
            assert event.index in started and event.index not in ended
            assert (event.id, event.name) == (started[event.index].id, started[event.index].name)
            assert event.raw == args[event.index]
            ended.add(event.index)
        elif isinstance(event, TextDelta | ReasoningDelta):
            assert event.text
    assert ended == set(started)


def provider_for(server, client, **kwargs):
    return OpenAIProvider(base_url=server.base_url, model="test-model", client=client, **kwargs)


def events(*payloads):
    """An SSE body: one data line per payload (dicts as JSON)."""
    return "".join(f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n" for p in payloads)


def sse(body, split):
    return SSEResponse(body) if split == "whole" else SSEResponse.split(body, seed=split, max_piece=97)


# --- every recorded stream -----------------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("vector", VECTORS)
async def test_vector(server, client, vector, split):
    expected = vector["expected"]
    server.enqueue(sse("\n".join(vector["input"]), split))

    got = await collect(provider_for(server, client))

    assert [(c.name, c.args, c.error) for c in got.calls] == [
        (c["name"], c["arguments"], None) for c in expected["tool_calls"]
    ]
    for call, want in zip(got.calls, expected["tool_calls"], strict=True):
        assert call.id == want["id"]
        if "arguments_raw" in want:
            assert call.raw == want["arguments_raw"]
    # A refusal is shown as the answer's text; otherwise the person would see nothing.
    assert got.text == (expected.get("text") or expected.get("refusal") or "")
    assert got.reasoning == (expected.get("reasoning") or "")
    assert got.finish == expected["finish_reason"]


LLAMA_FILE = ROOT.parent / "shared" / "vectors" / "llama_servers_sse.json"
LLAMA_STREAMS = (
    [v for v in json.loads(LLAMA_FILE.read_text(encoding="utf-8")) if v["kind"] == "openai_sse"]
    if LLAMA_FILE.exists()
    else []
)


@pytest.mark.parametrize("vector", LLAMA_STREAMS, ids=[v["id"] for v in LLAMA_STREAMS])
async def test_streams_recorded_from_llama_servers_are_whole_answers(server, client, vector):
    # Real servers' normal endings (finish_reason, then [DONE]) are complete answers, not streams cut short.
    server.enqueue(sse("\n".join(vector["input"]), "whole"))
    got = await collect(provider_for(server, client))
    assert (got.text, got.finish) == (vector["expected"]["text"], vector["expected"]["finish_reason"])
    assert [c.name for c in got.calls] == [c["name"] for c in vector["expected"].get("tool_calls", [])]


async def test_usage_is_reported_once_before_finish(server, client):
    server.enqueue(SSEResponse(openai_sse_body(text="Hi", usage={"prompt_tokens": 7, "completion_tokens": 3})))
    got = await collect(provider_for(server, client))
    assert got.events[-2:] == [Usage(input_tokens=7, output_tokens=3), Finish("stop")]


async def test_usage_before_finish_reason_and_no_done(server, client):
    body = (
        'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n'
        'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}\n\n'
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n'
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert got.events == [TextDelta("ok"), Usage(1, 2), Finish("length")]


# --- the request the server receives ---------------------------------------------------------


async def test_request_body_in_openai_shape(server, client):
    server.enqueue(SSEResponse(openai_sse_body(text="It is sunny.")))
    messages = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="Weather in Paris?"),
        ChatMessage(
            role="assistant", tool_calls=[ToolCallRequest(id="call_1", name="get_weather", args={"city": "Paris"})]
        ),
        ChatMessage(
            role="tool", content='{"sky": "sunny"}', tool_call_id="call_1", name="get_weather", status="success"
        ),
        ChatMessage(
            role="assistant", content="Let me check again.", tool_calls=[ToolCallRequest("call_2", "get_weather", {})]
        ),
        ChatMessage(role="tool", content="ok", tool_call_id="call_2", name="get_weather", status="error"),
        ChatMessage(role="assistant", content="Sunny."),
        ChatMessage(role="user", content="Thanks"),
    ]
    await collect(provider_for(server, client, temperature=0.2, max_tokens=50), messages, [WEATHER])

    [request] = server.requests
    assert request["method"] == "POST"
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Accept"] == "text/event-stream"
    assert request["json"] == {
        "model": "test-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.2,
        "max_tokens": 50,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather for a city.",
                    "parameters": WEATHER.parameters,
                },
            }
        ],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "sunny"}'},
            {
                "role": "assistant",
                "content": "Let me check again.",
                "tool_calls": [
                    {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_2", "content": "ok"},
            {"role": "assistant", "content": "Sunny."},
            {"role": "user", "content": "Thanks"},
        ],
    }


async def test_an_assistant_turn_that_only_calls_tools_sends_an_empty_string_not_null(server, client):
    # llama-cpp-python's server rejects "content": null with a 500 ("Input should be a valid string").
    server.enqueue(SSEResponse(openai_sse_body(text="ok")))
    messages = [
        ChatMessage(role="user", content="Weather?"),
        ChatMessage(role="assistant", tool_calls=[ToolCallRequest("call_1", "get_weather", {"city": "Oslo"})]),
        ChatMessage(role="tool", content="sunny", tool_call_id="call_1", name="get_weather", status="success"),
    ]
    await collect(provider_for(server, client), messages, [WEATHER])
    assert server.requests[0]["json"]["messages"][1]["content"] == ""


async def test_no_tools_no_options_when_unset(server, client):
    server.enqueue(SSEResponse(openai_sse_body(text="Hi")))
    await collect(provider_for(server, client))
    body = server.requests[0]["json"]
    assert set(body) == {"model", "messages", "stream", "stream_options"}


async def test_authorization_header_only_with_a_key(server, client):
    server.enqueue(SSEResponse(openai_sse_body(text="a")), SSEResponse(openai_sse_body(text="b")))
    await collect(provider_for(server, client, api_key=API_KEY))
    await collect(provider_for(server, client))
    with_key, without_key = (r["headers"] for r in server.requests)
    assert with_key["Authorization"] == f"Bearer {API_KEY}"
    assert "Authorization" not in without_key


async def test_label_and_default_client(server):
    server.enqueue(SSEResponse(openai_sse_body(text="from the shared client")))
    provider = OpenAIProvider(base_url=server.base_url + "/", model="qwen3")
    assert provider.label == f"qwen3 · {server.base_url}/"
    assert provider.is_demo is False
    got = await collect(provider)  # the trailing slash must not double up in the path
    assert got.text == "from the shared client"
    assert server.requests[0]["path"] == "/v1/chat/completions"


# --- tool-call assembly ----------------------------------------------------------------------


async def test_tool_calls_streamed_from_the_helper(server, client):
    calls = [
        {"id": "call_a", "name": "get_weather", "arguments": '{"city": "Zürich"}'},
        {"id": "call_b", "name": "get_time", "arguments": ""},
    ]
    server.enqueue(SSEResponse.split(openai_sse_body(text="Checking.", tool_calls=calls), seed=3, max_piece=23))
    got = await collect(provider_for(server, client), tools=[WEATHER])
    assert got.text == "Checking."
    assert got.calls == [
        ToolCallEnd(0, "call_a", "get_weather", '{"city": "Zürich"}', {"city": "Zürich"}),
        ToolCallEnd(1, "call_b", "get_time", "", {}),  # no argument text at all: an empty object
    ]
    assert got.of(ToolCallStart) == [ToolCallStart(0, "call_a", "get_weather"), ToolCallStart(1, "call_b", "get_time")]
    assert got.finish == "tool_calls"


@pytest.mark.parametrize(
    ("arguments", "error_start"),
    [
        ('{"city": "Par', "Arguments are not valid JSON: "),
        ("not json", "Arguments are not valid JSON: "),
        ("[1, 2]", "Arguments are not valid JSON: expected an object"),
    ],
)
async def test_unusable_arguments_end_with_an_error(server, client, arguments, error_start):
    calls = [{"id": "call_x", "name": "get_weather", "arguments": arguments}]
    server.enqueue(SSEResponse(openai_sse_body(tool_calls=calls)))
    got = await collect(provider_for(server, client))
    [end] = got.calls
    assert (end.raw, end.args) == (arguments, None)
    assert end.error.startswith(error_start)
    assert got.finish == "tool_calls"


async def test_missing_id_is_generated_and_empty_tool_calls_create_nothing(server, client):
    frag = {"index": 0, "function": {"name": "f", "arguments": ""}}  # no "id"
    body = events(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": []}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [frag]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a":1}'}}]}}]},
        "[DONE]",
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    [end] = got.calls
    assert end.id.startswith("call_") and len(end.id) > len("call_")
    assert (end.name, end.args) == ("f", {"a": 1})
    assert got.finish == "tool_calls"  # no finish_reason arrived: with calls, that is what the model did


async def test_the_last_event_without_its_blank_line_is_read(server, client):
    finish = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
    server.enqueue(SSEResponse(events(finish) + "data: [DONE]"))
    got = await collect(provider_for(server, client))
    assert (got.text, got.finish) == ("ok", "stop")


async def test_a_refusal_is_shown_as_the_answer(server, client):
    refusal = {"choices": [{"index": 0, "delta": {"content": None, "refusal": "I can't help with that."}}]}
    server.enqueue(
        SSEResponse(events(refusal, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, "[DONE]"))
    )
    got = await collect(provider_for(server, client))
    assert (got.text, got.finish) == ("I can't help with that.", "stop")


async def test_reasoning_field_and_unknown_finish_reason(server, client):
    body = (
        'data: {"choices":[{"index":0,"delta":{"reasoning":"hmm"}}]}\n\n'
        'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"something_new"}]}\n\n'
        "data: [DONE]\n\n"
    )
    server.enqueue(SSEResponse(body))
    got = await collect(provider_for(server, client))
    assert got.events == [ReasoningDelta("hmm"), TextDelta("ok"), Finish("other")]


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "phrase"),
    [(429, "429 Too Many Requests"), (500, "500 Internal Server Error"), (401, "401 Unauthorized")],
)
async def test_http_error_names_server_and_message_but_not_the_key(server, client, status, phrase):
    message = f"Incorrect API key provided: {API_KEY}. Or you are rate limited."
    server.enqueue(ErrorResponse(status, {"error": {"message": message, "type": "x"}}, {"Retry-After": "1"}))
    with pytest.raises(ModelError) as caught:
        await collect(provider_for(server, client, api_key=API_KEY))
    text = str(caught.value)
    assert text.startswith(f"The model server at {server.base_url} answered {phrase}: Incorrect API key provided: ")
    assert "rate limited" in text
    assert API_KEY not in text


async def test_http_error_with_a_plain_text_body(server, client):
    server.enqueue(ErrorResponse(502, "<html>Bad gateway " + "x" * 5000 + "</html>"))
    with pytest.raises(ModelError) as caught:
        await collect(provider_for(server, client))
    text = str(caught.value)
    assert f"{server.base_url} answered 502 Bad Gateway: <html>Bad gateway" in text
    assert len(text) < 600


async def test_script_exhausted_is_a_500(server, client):
    with pytest.raises(ModelError, match="answered 500 Internal Server Error: script exhausted"):
        await collect(provider_for(server, client))


async def test_connection_refused_names_the_url(client):
    with socket.socket() as probe:  # a port that was free a moment ago and has nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    provider = OpenAIProvider(base_url=base_url, model="m", api_key=API_KEY, client=client)
    with pytest.raises(ModelError) as caught:
        await collect(provider)
    assert (
        str(caught.value) == f"Could not connect to the model server at {base_url}: connection refused. Is it running?"
    )


async def test_error_object_after_http_200(server, client):
    body = (
        'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\n'
        'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error"}}\n\n'
    )
    server.enqueue(SSEResponse(body))
    seen = []
    with pytest.raises(ModelError) as caught:
        async for event in provider_for(server, client).stream(HELLO, []):
            seen.append(event)
    assert seen == [TextDelta("par")]
    assert str(caught.value) == (
        f"The model server at {server.base_url} reported an error mid-stream: "
        "The server had an error while processing your request."
    )


async def test_data_that_is_not_json(server, client):
    server.enqueue(SSEResponse("data: this is not json\n\n"))
    with pytest.raises(ModelError, match=r"sent a stream event that is not JSON: 'this is not json'") as caught:
        await collect(provider_for(server, client))
    assert server.base_url in str(caught.value)


async def test_json_instead_of_a_stream(server, client):
    server.enqueue(ErrorResponse(200, {"error": {"message": "streaming is disabled"}}))
    with pytest.raises(ModelError, match=r"answered with JSON instead of an event stream.*streaming is disabled"):
        await collect(provider_for(server, client))


async def test_empty_response_is_an_error(server, client):
    server.enqueue(SSEResponse(b""))
    with pytest.raises(ModelError, match="ended the response without sending anything"):
        await collect(provider_for(server, client))


async def test_read_timeout(server):
    server.enqueue(Hang(prelude=b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'))
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, read=0.2)) as slow:
        with pytest.raises(ModelError) as caught:
            await collect(provider_for(server, slow))
    assert str(caught.value) == f"The model server at {server.base_url} sent nothing for 0.2 s (read timeout)."


# --- a stream that ends before the answer does ---------------------------------------------------


async def test_a_stream_that_stops_without_finish_reason_or_done_is_an_error_after_its_text(server, client):
    text = {"choices": [{"index": 0, "delta": {"content": "half an ans"}, "finish_reason": None}]}
    server.enqueue(SSEResponse(events(text)))
    seen = []
    with pytest.raises(ModelError, match=r"ended the answer early") as caught:
        async for event in provider_for(server, client).stream(HELLO, []):
            seen.append(event)
    assert seen == [TextDelta("half an ans")]
    assert server.base_url in str(caught.value)


async def test_a_stream_that_stops_mid_call_is_an_error_not_a_call(server, client):
    start = {"index": 0, "id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"ci'}}
    server.enqueue(SSEResponse(events({"choices": [{"index": 0, "delta": {"tool_calls": [start]}}]})))
    seen = []
    with pytest.raises(ModelError, match=r"ended the answer early"):
        async for event in provider_for(server, client).stream(HELLO, [WEATHER]):
            seen.append(event)
    assert not [e for e in seen if isinstance(e, ToolCallEnd | Finish)]


async def test_done_without_a_finish_reason_is_a_complete_answer(server, client):
    # Some OpenAI-compatible servers never set finish_reason; [DONE] is their word that the answer is whole.
    text = {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]}
    server.enqueue(SSEResponse(events(text, "[DONE]")))
    got = await collect(provider_for(server, client))
    assert got.events == [TextDelta("Hi"), Finish("stop")]


# --- the CLI, as end-to-end tests run it -----------------------------------------------------------


async def test_cli_serves_a_script_and_reports_requests(tmp_path, client):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"text": "Hi there", "delay_ms": 1},
                {"text": "", "tool_calls": [{"id": "call_9", "name": "get_weather", "arguments": '{"city": "Oslo"}'}]},
                {"status": 503, "body": {"error": {"message": "overloaded"}}},
            ]
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.model_server", "--script", str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        first_line = process.stdout.readline()
        assert first_line.startswith("PORT ")
        base = f"http://127.0.0.1:{int(first_line.split()[1])}"
        provider = OpenAIProvider(base_url=base + "/v1", model="e2e", client=client)
        assert (await collect(provider)).text == "Hi there"
        assert (await collect(provider)).calls == [
            ToolCallEnd(0, "call_9", "get_weather", '{"city": "Oslo"}', {"city": "Oslo"})
        ]
        with pytest.raises(ModelError, match="503 Service Unavailable: overloaded"):
            await collect(provider)
        recorded = (await client.get(base + "/_requests")).json()
        assert [r["json"]["model"] for r in recorded] == ["e2e", "e2e", "e2e"]
    finally:
        process.terminate()
        process.wait(timeout=5)
        process.stdout.close()
