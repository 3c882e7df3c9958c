"""Faults, injected by a real local server, for every HTTP provider: rate limits, server errors, connections
that break or stall, answers that take too long, tool calls cut short; and retries around them."""

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from providers.anthropic import AnthropicProvider
from providers.client import TRANSPORTS, new_http_client
from providers.ollama import OllamaProvider
from providers.openai import OUT_OF_TOKENS, OpenAIProvider
from providers.retry import RetryingProvider, RetryPolicy
from providers.types import ChatMessage, ModelError, TextDelta
from tests.providers.test_openai import collect
from tests.support.model_server import (
    Disconnect,
    ErrorResponse,
    Hang,
    NDJSONResponse,
    ScriptedModelServer,
    SSEResponse,
    anthropic_sse_body,
    ollama_ndjson_body,
    openai_sse_body,
)

ROOT = Path(__file__).resolve().parents[2]
HELLO = [ChatMessage(role="user", content="Hello")]
API_KEY = "sk-test-SECRET-fault-0123456789"
TOKENS = ["The ", "answer ", "is "]


@dataclass
class Kit:
    """One provider and how its server says things."""

    name: str

    def provider(self, server, client, **kwargs):
        if self.name == "openai":
            return OpenAIProvider(base_url=server.base_url, model="m", client=client, **kwargs)
        if self.name == "anthropic":
            return AnthropicProvider(base_url=server.root_url, model="m", client=client, **kwargs)
        return OllamaProvider(base_url=server.root_url, model="m", client=client, **kwargs)

    def url(self, server):
        return server.base_url if self.name == "openai" else server.root_url

    def answer(self, text="ok", **kwargs):
        if self.name == "openai":
            return SSEResponse(openai_sse_body(text=text, **kwargs))
        if self.name == "anthropic":
            return SSEResponse(anthropic_sse_body(text=text, **kwargs))
        return NDJSONResponse(ollama_ndjson_body(text=text, **kwargs))

    def token_pieces(self, tokens):
        """The start of a streamed answer, one piece per token, with no end."""
        if self.name == "openai":
            return [_sse(None, {"choices": [{"index": 0, "delta": {"content": t}}]}) for t in tokens]
        if self.name == "anthropic":
            start = _sse("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 1}}})
            block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
            deltas = [
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}} for t in tokens
            ]
            return [start + _sse("content_block_start", block), *(_sse("content_block_delta", d) for d in deltas)]
        return [
            (json.dumps({"message": {"role": "assistant", "content": t}, "done": False}) + "\n").encode()
            for t in tokens
        ]

    def stream(self, pieces, **kwargs):
        kind = NDJSONResponse if self.name == "ollama" else SSEResponse
        return kind(b"".join(pieces), pieces=pieces, **kwargs)


def _sse(event: str | None, payload: dict[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


KITS = [Kit("openai"), Kit("anthropic"), Kit("ollama")]


class Waits(list):
    """asyncio.sleep for the retry layer that records the waits and does not wait."""

    async def __call__(self, seconds):
        self.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture(params=KITS, ids=lambda kit: kit.name)
def kit(request):
    return request.param


@pytest.fixture
def server():
    with ScriptedModelServer() as s:
        yield s


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    """Every fault is tried through both transports the app can read model servers with."""
    return request.param


@pytest.fixture
async def client(transport):
    async with new_http_client(transport, timeout=httpx.Timeout(5.0)) as c:
        yield c


def retrying(provider, waits, attempts=3):
    return RetryingProvider(provider, RetryPolicy(max_attempts=attempts), sleep=waits)


async def requests_received(server, wait: float = 5.0) -> int:
    """How many requests the server recorded, once it recorded one: on a loaded machine its thread may read the
    request after the client's short read timeout has already given up on it."""
    deadline = asyncio.get_running_loop().time() + wait
    while not server.requests and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    return len(server.requests)


async def collect_until_error(provider):
    seen = []
    with pytest.raises(ModelError) as caught:
        async for event in provider.stream(HELLO, []):
            seen.append(event)
    return seen, str(caught.value)


# --- retried before the first token --------------------------------------------------------------


async def test_429_with_retry_after_is_retried_after_the_wait_it_asked(kit, server, client):
    limited = ErrorResponse(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
    server.enqueue(limited, kit.answer("after the wait"))
    waits = Waits()
    got = await collect(retrying(kit.provider(server, client), waits))
    assert got.text == "after the wait"
    assert waits == [1.0]
    assert len(server.requests) == 2


async def test_429_with_retry_after_zero_really_retries(kit, server, client):
    server.enqueue(ErrorResponse(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}), kit.answer("again"))
    got = await collect(RetryingProvider(kit.provider(server, client), RetryPolicy(max_attempts=2)))
    assert got.text == "again"
    assert len(server.requests) == 2


async def test_500_then_success_backs_off(kit, server, client):
    server.enqueue(ErrorResponse(500, {"error": {"message": "hiccup"}}), kit.answer("fine now"))
    waits = Waits()
    got = await collect(retrying(kit.provider(server, client), waits))
    assert got.text == "fine now"
    assert len(waits) == 1 and 0.25 <= waits[0] <= 0.5  # first backoff: half to all of 0.5 s


async def test_500_three_times_names_the_server_and_status_but_not_the_key(kit, server, client):
    boom = ErrorResponse(500, {"error": {"message": f"boom with key {API_KEY}"}})
    server.enqueue(boom, boom, boom, kit.answer("never reached"))
    waits = Waits()
    _, message = await collect_until_error(retrying(kit.provider(server, client, api_key=API_KEY), waits))
    assert (
        message
        == f"The model server at {kit.url(server)} answered 500 Internal Server Error: boom with key *** (3 attempts)"
    )
    assert len(server.requests) == 3 and len(waits) == 2
    assert waits[1] >= 0.5  # the second wait is longer: exponential


@pytest.mark.parametrize("status", [502, 503, 504, 529])
async def test_other_retryable_statuses(kit, server, client, status):
    server.enqueue(ErrorResponse(status, "busy"), kit.answer("ok"))
    assert (await collect(retrying(kit.provider(server, client), Waits()))).text == "ok"


async def test_a_connection_closed_before_any_answer_is_retried(kit, server, client):
    server.enqueue(Disconnect(), kit.answer("second try"))
    assert (await collect(retrying(kit.provider(server, client), Waits()))).text == "second try"
    assert len(server.requests) == 2


async def test_a_stream_that_ends_early_before_any_answer_is_retried(kit, server, client):
    # The stream's opening (OpenAI's role chunk, Anthropic's message_start, an empty Ollama line), then a clean close.
    opening = kit.token_pieces([""])[:1]
    server.enqueue(kit.stream(opening), kit.answer("second try"))
    assert (await collect(retrying(kit.provider(server, client), Waits()))).text == "second try"
    assert len(server.requests) == 2


async def test_a_stream_that_ends_early_after_some_text_fails_without_retry_after_yielding_it(kit, server, client):
    server.enqueue(kit.stream(kit.token_pieces(TOKENS)), kit.answer("never"))
    seen, message = await collect_until_error(retrying(kit.provider(server, client), Waits()))
    assert seen == [TextDelta(t) for t in TOKENS]
    assert message.startswith(f"The model server at {kit.url(server)} ended the answer early: ")
    assert len(server.requests) == 1


async def test_connection_refused_is_retried_then_reported(kit, client):
    with socket.socket() as probe:  # a port that was free a moment ago and has nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    kinds = {"openai": OpenAIProvider, "anthropic": AnthropicProvider, "ollama": OllamaProvider}
    waits = Waits()
    provider = retrying(kinds[kit.name](base_url=base, model="m", client=client), waits, attempts=2)
    _, message = await collect_until_error(provider)
    assert (
        message == f"Could not connect to the model server at {base}: connection refused. Is it running? (2 attempts)"
    )
    assert len(waits) == 1


# --- not retried ------------------------------------------------------------------------------------


async def test_a_client_error_is_not_retried(kit, server, client):
    server.enqueue(ErrorResponse(400, {"error": {"message": "bad request"}}), kit.answer("never"))
    _, message = await collect_until_error(retrying(kit.provider(server, client), Waits()))
    assert message == f"The model server at {kit.url(server)} answered 400 Bad Request: bad request"
    assert len(server.requests) == 1


# What llama-cpp-python's server answers to a request its pydantic models refuse (here "content": null).
PYDANTIC_500 = {
    "error": {
        "message": "[{'type': 'string_type', 'loc': ('body', 'messages', 1, 'typed-dict', 'content'), "
        "'msg': 'Input should be a valid string', 'input': None}]",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}


@pytest.mark.parametrize(
    "body",
    [PYDANTIC_500, {"error": {"message": "messages: bad role", "type": "invalid_request_error"}}],
    ids=["pydantic", "invalid_request_error"],
)
async def test_a_server_error_that_says_the_request_is_invalid_is_not_retried(kit, server, client, body):
    server.enqueue(ErrorResponse(500, body), kit.answer("never"))
    waits = Waits()
    _, message = await collect_until_error(retrying(kit.provider(server, client), waits))
    assert message.startswith(f"The model server at {kit.url(server)} answered 500 Internal Server Error: ")
    assert (len(server.requests), waits) == (1, [])


async def test_a_retry_after_longer_than_the_cap_fails_at_once(kit, server, client):
    server.enqueue(ErrorResponse(429, {"error": {"message": "quota"}}, {"Retry-After": "3600"}), kit.answer("never"))
    waits = Waits()
    _, message = await collect_until_error(retrying(kit.provider(server, client), waits))
    assert message.endswith("answered 429 Too Many Requests: quota (it asked to wait 3600 s before trying again)")
    assert (len(server.requests), waits) == (1, [])


async def test_a_server_that_says_do_not_retry_is_believed(kit, server, client):
    server.enqueue(ErrorResponse(503, "no", {"x-should-retry": "false"}), kit.answer("never"))
    await collect_until_error(retrying(kit.provider(server, client), Waits()))
    assert len(server.requests) == 1


async def test_reset_after_k_tokens_fails_without_retry_after_yielding_them(kit, server, client):
    server.enqueue(kit.stream(kit.token_pieces(TOKENS), delay=0.01, reset=True), kit.answer("never"))
    seen, message = await collect_until_error(retrying(kit.provider(server, client), Waits()))
    assert seen == [TextDelta(t) for t in TOKENS]
    assert message.startswith(f"The connection to the model server at {kit.url(server)} broke: ")
    assert len(server.requests) == 1


async def test_stall_past_the_read_timeout_of_the_client(kit, server, transport):
    server.enqueue(Hang(prelude=b"".join(kit.token_pieces(TOKENS[:1]))), kit.answer("never"))
    async with new_http_client(transport, timeout=httpx.Timeout(5.0, read=0.2)) as slow:
        seen, message = await collect_until_error(retrying(kit.provider(server, slow), Waits()))
    assert seen == [TextDelta(TOKENS[0])]
    assert message == f"The model server at {kit.url(server)} sent nothing for 0.2 s (read timeout)."
    assert await requests_received(server) == 1


async def test_silence_before_the_first_token_is_not_retried_either(kit, server, client):
    # A slow model is not a broken connection: asking again would only double the wait.
    server.enqueue(Hang(), kit.answer("never"))
    seen, message = await collect_until_error(retrying(kit.provider(server, client, read_timeout=0.2), Waits()))
    assert seen == []
    assert message == f"The model server at {kit.url(server)} sent nothing for 0.2 s (read timeout)."
    assert await requests_received(server) == 1


async def test_total_timeout_for_an_answer_that_trickles(kit, server, client):
    pieces = kit.token_pieces([f"t{i} " for i in range(40)])
    server.enqueue(kit.stream(pieces, delay=0.02))
    seen, message = await collect_until_error(kit.provider(server, client, timeout=0.3))
    assert 0 < len(seen) < 40  # each piece came well within the read timeout; the whole took too long
    assert message == f"The model server at {kit.url(server)} did not finish its answer within 0.3 s (total timeout)."


# --- tool calls cut short --------------------------------------------------------------------------------


async def test_truncated_tool_json(kit, server, client):
    call = {"id": "call_t", "name": "get_weather", "arguments": '{"city": "Par'}
    if kit.name == "openai":
        server.enqueue(kit.answer("", tool_calls=[call], finish_reason="length"))
    elif kit.name == "anthropic":
        server.enqueue(kit.answer("", tool_calls=[call], stop_reason="max_tokens"))
    else:
        # Ollama parses calls itself and sends them whole; a proxy may still pass a string cut short.
        server.enqueue(kit.answer("", tool_calls=[call]))
    got = await collect(kit.provider(server, client))
    [end] = got.calls
    assert (end.name, end.raw, end.args) == ("get_weather", '{"city": "Par', None)
    if kit.name == "ollama":
        assert end.error.startswith("Arguments are not valid JSON")
    else:
        assert end.error == OUT_OF_TOKENS
        assert got.finish == "length"


# --- provider-specific ----------------------------------------------------------------------------------


async def test_anthropic_overloaded_event_before_any_content_is_retried(server, client):
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server.enqueue(SSEResponse(_sse("error", overloaded)), SSEResponse(anthropic_sse_body(text="ok")))
    provider = retrying(AnthropicProvider(base_url=server.root_url, model="m", client=client), Waits())
    assert (await collect(provider)).text == "ok"


async def test_openai_retry_after_ms(server, client):
    limited = ErrorResponse(429, {"error": {"message": "rate limited"}}, {"retry-after-ms": "20"})
    server.enqueue(limited, SSEResponse(openai_sse_body(text="ok")))
    waits = Waits()
    await collect(retrying(OpenAIProvider(base_url=server.base_url, model="m", client=client), waits))
    assert waits == [0.02]


async def test_openai_redirect_says_where_to(server, client):
    server.enqueue(ErrorResponse(301, "", {"Location": "https://models.example/v1/chat/completions"}))
    _, message = await collect_until_error(OpenAIProvider(base_url=server.base_url, model="m", client=client))
    assert message == (
        f"The model server at {server.base_url} answered 301 Moved Permanently, a redirect to "
        "https://models.example/v1/chat/completions: set the base URL to the address it redirects to."
    )


async def test_stopping_early_closes_the_response(kit, server, client):
    server.enqueue(kit.stream(kit.token_pieces(TOKENS), delay=0.01), kit.answer("next"))
    provider = retrying(kit.provider(server, client), Waits())
    async with contextlib.aclosing(provider.stream(HELLO, [])) as events:
        async for _ in events:
            break
    assert (await collect(provider)).text == "next"  # the pool was not left holding a half-read response


# --- the CLI, as end-to-end tests run it -------------------------------------------------------------------


async def test_cli_serves_anthropic_and_ollama_streams_and_faults(tmp_path, client):
    script = tmp_path / "script.json"
    weather = {"id": "toolu_9", "name": "get_weather", "arguments": {"city": "Oslo"}}
    entries = [
        {"disconnect": True},
        {"format": "anthropic", "text": "Hi there", "delay_ms": 1},
        {"format": "ollama", "tool_calls": [weather]},
        {"format": "ollama", "status": 503, "body": {"error": "loading"}},
    ]
    script.write_text(json.dumps(entries))
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.model_server", "--script", str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        base = f"http://127.0.0.1:{int(process.stdout.readline().split()[1])}"
        anthropic = retrying(AnthropicProvider(base_url=base, model="e2e", client=client), Waits())
        assert (await collect(anthropic)).text == "Hi there"  # after the disconnect, retried
        ollama = OllamaProvider(base_url=base, model="e2e", client=client)
        [call] = (await collect(ollama, tools=[])).calls
        assert (call.name, call.args) == ("get_weather", {"city": "Oslo"})
        with pytest.raises(ModelError, match="503 Service Unavailable: loading"):
            await collect(ollama)
        recorded = (await client.get(base + "/_requests")).json()
        assert [r["path"] for r in recorded] == ["/v1/messages", "/v1/messages", "/api/chat", "/api/chat"]
    finally:
        process.terminate()
        process.wait(timeout=5)
        process.stdout.close()
