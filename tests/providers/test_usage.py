"""Every model call's tokens, from every provider, against the scripted model server (real wire formats): what the
server counted, an OpenAI-compatible server that refuses `stream_options` (asked again without it, and never asked
with it again), and a server that sends no counts (estimated, and marked so)."""

import httpx
import pytest

from chat.agent import step_usage
from providers import openai as openai_module
from providers.anthropic import AnthropicProvider
from providers.budget import estimate
from providers.config import ModelConfig, build_provider
from providers.ollama import OllamaProvider
from providers.openai import OpenAIProvider
from providers.types import ChatMessage, ModelError, TextDelta, Usage
from tests.support.model_server import (
    ErrorResponse,
    NDJSONResponse,
    ScriptedModelServer,
    SSEResponse,
    anthropic_sse_body,
    ollama_ndjson_body,
    openai_sse_body,
)

HELLO = [ChatMessage(role="user", content="Hello")]
REFUSAL = {
    "object": "error",
    "message": "[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not"
    " permitted'}]",
    "type": "BadRequestError",
    "code": 400,
}


@pytest.fixture
def server():
    with ScriptedModelServer() as s:
        yield s


@pytest.fixture
async def client():
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0)) as c:
        yield c


@pytest.fixture(autouse=True)
def forget_refusals():
    openai_module.USAGE_OPTION_REFUSED.clear()
    yield
    openai_module.USAGE_OPTION_REFUSED.clear()


async def collect(provider, messages=HELLO):
    return [event async for event in provider.stream(list(messages), [])]


def usages(events):
    return [e for e in events if isinstance(e, Usage)]


def text(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_openai_asks_for_usage_and_reads_it(server, client):
    server.enqueue(SSEResponse(openai_sse_body(text="Hi", usage={"prompt_tokens": 12, "completion_tokens": 2})))
    got = await collect(OpenAIProvider(base_url=server.base_url, model="m", client=client))
    assert server.requests[0]["json"]["stream_options"] == {"include_usage": True}
    assert usages(got) == [Usage(12, 2)]


async def test_a_server_that_refuses_stream_options_is_asked_again_without_them_and_never_with_them_again(
    server, client
):
    server.enqueue(
        ErrorResponse(400, REFUSAL),
        SSEResponse(openai_sse_body(text="Hi", usage=False)),
        SSEResponse(openai_sse_body(text="Again", usage=False)),
    )
    provider = OpenAIProvider(base_url=server.base_url, model="m", client=client)
    first = await collect(provider)
    assert text(first) == "Hi" and usages(first) == []
    assert [("stream_options" in r["json"]) for r in server.requests] == [True, False]
    # Another provider for the same server (the next run builds its own): remembered, one request.
    second = await collect(OpenAIProvider(base_url=server.base_url, model="m", client=client))
    assert text(second) == "Again"
    assert [("stream_options" in r["json"]) for r in server.requests] == [True, False, False]


async def test_a_400_about_something_else_is_an_error_and_is_not_sent_again(server, client):
    server.enqueue(ErrorResponse(400, {"error": {"message": "model 'm' not found", "type": "invalid_request_error"}}))
    with pytest.raises(ModelError, match="not found"):
        await collect(OpenAIProvider(base_url=server.base_url, model="m", client=client))
    assert len(server.requests) == 1
    assert not openai_module.USAGE_OPTION_REFUSED


async def test_a_refusal_through_the_retrying_provider_and_a_text_protocol_is_one_more_request(server):
    server.enqueue(ErrorResponse(400, REFUSAL), SSEResponse(openai_sse_body(text="Hi", usage=False)))
    config = ModelConfig(api="openai", base_url=server.base_url, model="m", tool_protocol="hermes", max_attempts=3)
    got = await collect(build_provider(config))
    assert text(got) == "Hi"
    assert len(server.requests) == 2


async def test_anthropic_usage_comes_from_message_start_and_message_delta(server, client):
    server.enqueue(SSEResponse(anthropic_sse_body(text="Hi", usage={"input_tokens": 31, "output_tokens": 4})))
    got = await collect(AnthropicProvider(base_url=server.root_url, model="c", client=client))
    assert usages(got) == [Usage(31, 4)]


async def test_anthropic_without_usage_yields_none(server, client):
    server.enqueue(SSEResponse(anthropic_sse_body(text="Hi", usage=False)))
    got = await collect(AnthropicProvider(base_url=server.root_url, model="c", client=client))
    assert text(got) == "Hi" and usages(got) == []


async def test_ollama_usage_comes_from_its_counts(server, client):
    server.enqueue(NDJSONResponse(ollama_ndjson_body(text="Hi", usage={"prompt_eval_count": 9, "eval_count": 3})))
    got = await collect(OllamaProvider(base_url=server.root_url, model="q", client=client))
    assert usages(got) == [Usage(9, 3)]


async def test_ollama_without_counts_yields_none(server, client):
    server.enqueue(NDJSONResponse(ollama_ndjson_body(text="Hi", usage=False)))
    got = await collect(OllamaProvider(base_url=server.root_url, model="q", client=client))
    assert text(got) == "Hi" and usages(got) == []


async def test_a_text_protocol_passes_its_transports_usage_on(server):
    server.enqueue(SSEResponse(openai_sse_body(text="Hi", usage={"prompt_tokens": 50, "completion_tokens": 5})))
    config = ModelConfig(api="openai", base_url=server.base_url, model="m", tool_protocol="xml")
    assert usages(await collect(build_provider(config))) == [Usage(50, 5)]


# --- what a step records -------------------------------------------------------------------


def test_reported_usage_is_kept_as_it_is():
    answer = ChatMessage(role="assistant", content="Hello there")
    assert step_usage(Usage(7, 3), HELLO, [], answer, "") == {"input_tokens": 7, "output_tokens": 3, "estimated": False}


def test_no_usage_is_estimated_from_what_was_sent_and_what_came_back():
    answer = ChatMessage(role="assistant", content="x" * 400)
    usage = step_usage(None, HELLO, [], answer, "y" * 40)
    assert usage["estimated"] is True
    assert usage["input_tokens"] == estimate(HELLO)
    assert usage["output_tokens"] == 4 + 100 + 10  # the message's overhead, its text, its reasoning


def test_a_missing_half_is_estimated_and_the_whole_marked_estimated():
    answer = ChatMessage(role="assistant", content="abcd")
    usage = step_usage(Usage(input_tokens=None, output_tokens=9), HELLO, [], answer, "")
    assert usage == {"input_tokens": estimate(HELLO), "output_tokens": 9, "estimated": True}
