"""The Ollama native /api/chat provider against a real local server speaking its NDJSON stream."""

import json
import ssl

import httpx
import pytest

from providers.ollama import NDJSONDecoder, OllamaProvider
from providers.types import (
    ChatMessage,
    Finish,
    ModelError,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    ToolDefinition,
    Usage,
)
from tests.providers.test_openai import Collected, collect
from tests.support import vectors
from tests.support.model_server import (
    ErrorResponse,
    NDJSONResponse,
    ScriptedModelServer,
    SSEResponse,
    ollama_ndjson_body,
)

VECTORS = vectors.cases("ollama_api_chat_ndjson.json")
SPLITS = ["whole", 31, 32, 33]  # seeds for random byte splits
TLS = ssl.create_default_context()  # made once: building one per client costs ~70 ms a test
HELLO = [ChatMessage(role="user", content="Hello")]
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
    return OllamaProvider(base_url=server.root_url, model="qwen3", client=client, **kwargs)


def ndjson(*objects):
    return "".join(json.dumps(o) + "\n" for o in objects)


def chunk(done=False, **message):
    return {"model": "qwen3", "message": {"role": "assistant", **message}, "done": done}


# --- every documented stream ---------------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("vector", VECTORS)
async def test_vector(server, client, vector, split):
    expected = vector["expected"]
    body = "\n".join(vector["input"]) + "\n"
    server.enqueue(NDJSONResponse(body) if split == "whole" else NDJSONResponse.split(body, seed=split, max_piece=41))

    if vector["id"] == "ollama-ndjson-007":
        # No done line at all: the call that came whole is surfaced, then the stream is reported as cut off
        # (the vector allows either; a run does not act on an answer that never ended).
        got = Collected()
        with pytest.raises(ModelError, match="ended the answer early"):
            async for event in provider_for(server, client).stream(list(HELLO), []):
                got.events.append(event)
    else:
        got = await collect(provider_for(server, client))

    # ollama-ndjson-008 (QUIRK, langchain-ollama): a "functionName" argument equal to the tool's name is
    # dropped; we follow it, since passing it on would fail the tool's argument validation.
    assert [(c.name, c.args, c.error) for c in got.calls] == [
        (c["name"], c["arguments"], None) for c in expected["tool_calls"]
    ]
    ids = [c.id for c in got.calls]
    assert all(i.startswith("call_") for i in ids) and len(set(ids)) == len(ids)  # Ollama sends none: made up
    assert [c.index for c in got.calls] == list(range(len(got.calls)))
    if "text" in expected:
        assert got.text == expected["text"]
    reason = expected.get("done_reason")
    if reason == "stop":
        assert got.finish == ("tool_calls" if expected["tool_calls"] else "stop")


async def test_counts_become_usage(server, client):
    # As Ollama's documentation shows a stream (the shared vector ollama-ndjson-001).
    last = {"model": "qwen3", "done": True, "total_duration": 4883583458, "prompt_eval_count": 26, "eval_count": 282}
    server.enqueue(NDJSONResponse(ndjson(chunk(content="The", images=None), last)))
    got = await collect(provider_for(server, client))
    assert got.events == [TextDelta("The"), Usage(input_tokens=26, output_tokens=282), Finish("stop")]


async def test_arguments_stream_as_their_json_text(server, client):
    body = ndjson(
        chunk(True, content="", tool_calls=[{"function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}])
    )
    server.enqueue(NDJSONResponse(body))
    got = await collect(provider_for(server, client), tools=[WEATHER])
    [start, args, end] = got.events[:3]
    assert isinstance(start, ToolCallStart) and (start.index, start.name) == (0, "get_weather")
    assert args == ToolCallArgsDelta(0, '{"city": "Zürich"}')
    assert end == ToolCallEnd(0, start.id, "get_weather", '{"city": "Zürich"}', {"city": "Zürich"})


async def test_a_stream_without_its_done_line_is_an_error_after_its_text(server, client):
    server.enqueue(NDJSONResponse(ndjson(chunk(content="half an "), chunk(content="ans"))))
    seen = []
    with pytest.raises(ModelError, match=r"ended the answer early") as caught:
        async for event in provider_for(server, client).stream(HELLO, []):
            seen.append(event)
    assert seen == [TextDelta("half an "), TextDelta("ans")]
    assert server.root_url in str(caught.value)


# --- the request the server receives ---------------------------------------------------------


async def test_request_in_ollama_shape(server, client):
    server.enqueue(NDJSONResponse(ollama_ndjson_body(text="Sunny.")))
    messages = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="Weather in Paris?"),
        ChatMessage(role="assistant", tool_calls=[ToolCallRequest("call_1", "get_weather", {"city": "Paris"})]),
        ChatMessage(
            role="tool", content='{"sky": "sunny"}', tool_call_id="call_1", name="get_weather", status="success"
        ),
        ChatMessage(role="assistant", content="Sunny."),
        ChatMessage(role="user", content="Thanks"),
    ]
    provider = provider_for(server, client, options={"temperature": 0.1, "num_ctx": 8192})
    await collect(provider, messages, [WEATHER])

    [request] = server.requests
    assert request["path"] == "/api/chat"
    assert "Authorization" not in request["headers"]
    assert request["json"] == {
        "model": "qwen3",
        "stream": True,
        "options": {"temperature": 0.1, "num_ctx": 8192},
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
                "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
            },
            {"role": "tool", "content": '{"sky": "sunny"}', "tool_name": "get_weather"},
            {"role": "assistant", "content": "Sunny."},
            {"role": "user", "content": "Thanks"},
        ],
    }


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/api/"])
async def test_base_url_forms_reach_api_chat(server, client, suffix):
    server.enqueue(NDJSONResponse(ollama_ndjson_body(text="ok")))
    provider = OllamaProvider(base_url=server.root_url + suffix, model="m", client=client, api_key="k-1")
    assert (await collect(provider)).text == "ok"
    assert server.requests[0]["path"] == "/api/chat"
    assert server.requests[0]["headers"]["Authorization"] == "Bearer k-1"
    assert set(server.requests[0]["json"]) == {"model", "messages", "stream"}


def test_defaults():
    provider = OllamaProvider(model="llama3.2")
    assert (provider.base_url, provider.label) == ("http://localhost:11434", "llama3.2 · http://localhost:11434")


# --- stream handling ----------------------------------------------------------------------------


async def test_thinking_load_and_text_from_the_helper_in_small_pieces(server, client):
    body = ollama_ndjson_body(
        thinking="Let me see.", text="Hi there", load=True, usage={"prompt_eval_count": 4, "eval_count": 6}
    )
    server.enqueue(NDJSONResponse.split(body, seed=7, max_piece=5))
    got = await collect(provider_for(server, client))
    assert (got.reasoning, got.text) == ("Let me see.", "Hi there")
    assert got.events[-2:] == [Usage(4, 6), Finish("stop")]


async def test_a_load_chunk_with_real_content_keeps_it(server, client):
    body = ndjson(
        {**chunk(True, content="Hi"), "done_reason": "load"},
        {**chunk(True, content=" there"), "done_reason": "stop"},
    )
    server.enqueue(NDJSONResponse(body))
    assert (await collect(provider_for(server, client))).text == "Hi there"


async def test_the_tools_own_name_echoed_as_function_name_is_dropped(server, client):
    call = {"function": {"name": "get_weather", "arguments": {"functionName": "get_weather", "city": "Paris"}}}
    server.enqueue(NDJSONResponse(ndjson(chunk(True, content="", tool_calls=[call]))))
    got = await collect(provider_for(server, client), tools=[WEATHER])
    assert got.calls[0].args == {"city": "Paris"}


async def test_function_name_kept_when_the_tool_takes_it(server, client):
    tool = ToolDefinition("dispatch", "", {"type": "object", "properties": {"functionName": {"type": "string"}}})
    call = {"function": {"name": "dispatch", "arguments": {"functionName": "dispatch"}}}
    server.enqueue(NDJSONResponse(ndjson(chunk(True, content="", tool_calls=[call]))))
    got = await collect(provider_for(server, client), tools=[tool])
    assert got.calls[0].args == {"functionName": "dispatch"}


@pytest.mark.parametrize(
    ("arguments", "error_start"),
    [('{"city": "Par', "Arguments are not valid JSON: "), ("[1]", "Arguments are not valid JSON: expected an object")],
)
async def test_unusable_string_arguments_end_with_an_error(server, client, arguments, error_start):
    call = {"function": {"name": "get_weather", "arguments": arguments}}
    server.enqueue(NDJSONResponse(ndjson(chunk(True, content="", tool_calls=[call]))))
    [end] = (await collect(provider_for(server, client))).calls
    assert (end.raw, end.args) == (arguments, None)
    assert end.error.startswith(error_start)


async def test_done_reason_length_and_unknown(server, client):
    server.enqueue(
        NDJSONResponse(ndjson({**chunk(True, content="cut"), "done_reason": "length"})),
        NDJSONResponse(ndjson({**chunk(True, content="?"), "done_reason": "unload"})),
    )
    assert (await collect(provider_for(server, client))).finish == "length"
    assert (await collect(provider_for(server, client))).finish == "other"


async def test_a_single_json_answer_is_read_too(server, client):
    # A proxy that drops "stream" gets one application/json object back: still a valid answer.
    server.enqueue(ErrorResponse(200, {**chunk(True, content="whole answer"), "done_reason": "stop"}))
    got = await collect(provider_for(server, client))
    assert (got.text, got.finish) == ("whole answer", "stop")


async def test_error_line_mid_stream_after_text(server, client):
    body = ndjson(chunk(content="par"), {"error": "an error was encountered while running the model: EOF"})
    server.enqueue(NDJSONResponse(body))
    seen = []
    with pytest.raises(ModelError) as caught:
        async for event in provider_for(server, client).stream(HELLO, []):
            seen.append(event)
    assert seen == [TextDelta("par")]
    assert str(caught.value) == (
        f"The model server at {server.root_url} reported an error mid-stream: "
        "an error was encountered while running the model: EOF"
    )


async def test_model_not_found(server, client):
    server.enqueue(ErrorResponse(404, {"error": 'model "nope" not found, try pulling it first'}))
    with pytest.raises(ModelError) as caught:
        await collect(provider_for(server, client))
    assert str(caught.value) == (
        f'The model server at {server.root_url} answered 404 Not Found: model "nope" not found, try pulling it first'
    )


async def test_a_line_that_is_not_json(server, client):
    server.enqueue(NDJSONResponse("<html>proxy error</html>\n"))
    with pytest.raises(ModelError, match=r"sent a line that is not JSON: '<html>proxy error</html>'"):
        await collect(provider_for(server, client))


async def test_empty_body(server, client):
    server.enqueue(SSEResponse(b""))
    with pytest.raises(ModelError, match="ended the response without sending anything"):
        await collect(provider_for(server, client))


def test_ndjson_decoder_splits_anywhere():
    data = '{"a": "é"}\r\n{"b": 2}\n\n{"c": 3}'.encode()
    decoder = NDJSONDecoder()
    lines = [line for i in range(len(data)) for line in decoder.feed(data[i : i + 1])] + decoder.close()
    assert [json.loads(line) for line in lines] == [{"a": "é"}, {"b": 2}, {"c": 3}]
