"""A conversation that no longer fits the model's context: what the person is told, from a real HTTP server."""

import httpx
import pytest

from providers.anthropic import AnthropicProvider
from providers.config import ModelConfig, build_provider
from providers.openai import OpenAIProvider
from providers.retry import RetryingProvider, RetryPolicy
from providers.types import ChatMessage, Finish, ModelError, TextDelta
from tests.support.model_server import (
    ErrorResponse,
    ScriptedModelServer,
    SSEResponse,
    anthropic_sse_body,
    openai_sse_body,
)

HELLO = [ChatMessage(role="user", content="Hello")]
FITS_NO_LONGER = "This conversation no longer fits the model's context"
LLAMA_CPP = {
    "error": {
        "code": 400,
        "message": "request (2137 tokens) exceeds the available context size (2048 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 2137,
        "n_ctx": 2048,
    }
}
OPENAI = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000"
        " tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
VLLM = {
    "object": "error",
    "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"
    " (5000 in the messages, 0 in the completion).",
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


async def no_wait(seconds):
    return None


async def failure(provider) -> tuple[str, str]:
    """The text streamed before the provider failed, and its error message."""
    text = ""
    with pytest.raises(ModelError) as caught:
        async for event in provider.stream(list(HELLO), []):
            if isinstance(event, TextDelta):
                text += event.text
    return text, str(caught.value)


@pytest.mark.parametrize(("body", "tokens"), [(LLAMA_CPP, 2048), (OPENAI, 8192), (VLLM, 4096)])
async def test_a_server_saying_the_context_is_exceeded_gives_the_size_and_what_to_do(server, client, body, tokens):
    server.enqueue(ErrorResponse(400, body))
    provider = OpenAIProvider(base_url=server.base_url, model="m", client=client)
    _, error = await failure(provider)
    assert error.startswith(f"{FITS_NO_LONGER} ({tokens} tokens). Start a new chat")
    assert "context window in the admin" in error


async def test_a_context_error_is_not_retried(server, client):
    server.enqueue(ErrorResponse(400, LLAMA_CPP), ErrorResponse(400, LLAMA_CPP))
    provider = OpenAIProvider(base_url=server.base_url, model="m", client=client)
    _, error = await failure(RetryingProvider(provider, RetryPolicy(max_attempts=3), sleep=no_wait))
    assert FITS_NO_LONGER in error
    assert len(server.requests) == 1


async def test_an_answer_stopped_by_length_without_an_output_limit_means_the_context_is_full(server, client):
    usage = {"prompt_tokens": 2000, "completion_tokens": 48, "total_tokens": 2048}
    server.enqueue(SSEResponse(openai_sse_body(text="The answer goes on and", finish_reason="length", usage=usage)))
    provider = build_provider(ModelConfig(api="openai", base_url=server.base_url, model="m"))
    text, error = await failure(provider)
    assert text == "The answer goes on and"  # kept, as with any failure mid-answer
    assert error.startswith(f"{FITS_NO_LONGER} (2048 tokens).")


async def test_a_short_conversation_whose_answer_ran_into_the_end_of_the_context_is_told_to_set_an_output_limit(
    server, client
):
    # An 82-token prompt: shortening it helps nothing; an output limit does.
    usage = {"prompt_tokens": 82, "completion_tokens": 1966, "total_tokens": 2048}
    server.enqueue(SSEResponse(openai_sse_body(text="On and on and", finish_reason="length", usage=usage)))
    provider = build_provider(ModelConfig(api="openai", base_url=server.base_url, model="m"))
    text, error = await failure(provider)
    assert text == "On and on and"
    assert error.startswith(
        "The answer filled the model's context (2048 tokens: 82 of conversation, 1966 of answer) and was cut off"
        " there, because no output limit is set for this model."
    )
    assert "Set the model's max output tokens" in error
    assert FITS_NO_LONGER not in error and "shorter" not in error


async def test_without_the_servers_counts_both_causes_of_a_full_context_are_said(server, client):
    body = openai_sse_body(text="On and on and", finish_reason="length", usage=False)
    server.enqueue(SSEResponse(body))
    provider = build_provider(ModelConfig(api="openai", base_url=server.base_url, model="m"))
    _, error = await failure(provider)
    assert error.startswith(FITS_NO_LONGER) and "Start a new chat" in error
    assert "If the conversation is short, the answer filled the context: no output limit is set" in error


async def test_anthropic_whose_answer_outgrew_the_window_before_its_output_limit_is_told_to_lower_it(server, client):
    usage = {"input_tokens": 500, "output_tokens": 3596}
    body = anthropic_sse_body(text="It goes on and", stop_reason="model_context_window_exceeded", usage=usage)
    server.enqueue(SSEResponse(body))
    provider = AnthropicProvider(base_url=server.base_url, model="claude", api_key="sk-ant-test", client=client)
    _, error = await failure(provider)
    assert error.startswith("The answer filled the model's context (4096 tokens: 500 of conversation, 3596 of answer)")
    assert "its output limit (4096 tokens) is larger than the room the context had left" in error


async def test_an_answer_stopped_by_the_output_limit_sent_is_cut_off_not_a_full_context(server, client):
    server.enqueue(SSEResponse(openai_sse_body(text="Cut here", finish_reason="length")))
    provider = build_provider(ModelConfig(api="openai", base_url=server.base_url, model="m", max_tokens=2))
    events = [event async for event in provider.stream(list(HELLO), [])]
    assert events[-1] == Finish("length")


LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 2048}, "total_slots": 1}


async def test_an_output_limit_larger_than_the_room_left_is_said_when_llama_server_tells_its_context(server, client):
    # llama-server's /props gives the slot's context: 82 + 1966 filled it, well before the 4096-token limit.
    server.props = LLAMA_PROPS
    usage = {"prompt_tokens": 82, "completion_tokens": 1966, "total_tokens": 2048}
    server.enqueue(SSEResponse(openai_sse_body(text="On and on and", finish_reason="length", usage=usage)))
    provider = build_provider(
        ModelConfig(api="openai", base_url=server.base_url, model="m", max_tokens=4096, api_key="sk-local")
    )
    text, error = await failure(provider)
    assert text == "On and on and"
    assert error.startswith(
        "The answer filled the model's context (2048 tokens: 82 of conversation, 1966 of answer) and was cut off"
        " there, because its output limit (4096 tokens) is larger than the room the context had left."
    )
    props = [r for r in server.requests if r["path"] == "/props"]
    assert len(props) == 1 and props[0]["headers"]["Authorization"] == "Bearer sk-local"  # the same server's key


@pytest.mark.parametrize(
    ("props", "usage"),
    [
        (None, {"prompt_tokens": 82, "completion_tokens": 1966, "total_tokens": 2048}),  # not llama-server
        (LLAMA_PROPS, {"prompt_tokens": 82, "completion_tokens": 500, "total_tokens": 582}),  # the server's own cap
        (LLAMA_PROPS, False),  # no counts
    ],
)
async def test_a_length_stop_the_context_cannot_be_shown_to_have_caused_stays_a_cut_answer(
    server, client, props, usage
):
    server.props = props
    server.enqueue(SSEResponse(openai_sse_body(text="Cut here", finish_reason="length", usage=usage)))
    provider = build_provider(ModelConfig(api="openai", base_url=server.base_url, model="m", max_tokens=4096))
    events = [event async for event in provider.stream(list(HELLO), [])]
    assert events[-1] == Finish("length")


async def test_an_empty_answer_says_the_conversation_may_no_longer_fit(server, client):
    server.enqueue(SSEResponse(b""))
    provider = OpenAIProvider(base_url=server.base_url, model="m", client=client)
    _, error = await failure(provider)
    assert "without sending anything" in error
    assert "no longer fits the model's context" in error and "Start a new chat" in error


async def test_anthropic_saying_the_prompt_is_too_long_gets_the_same_message(server, client):
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "prompt is too long: 210417 tokens > 200000 maximum"},
    }
    server.enqueue(ErrorResponse(400, body))
    provider = AnthropicProvider(base_url=server.base_url, model="claude", api_key="sk-ant-test", client=client)
    _, error = await failure(provider)
    assert error.startswith(f"{FITS_NO_LONGER} (200000 tokens).")


async def test_anthropic_stopping_at_the_end_of_the_context_window_says_the_context_is_full(server, client):
    usage = {"input_tokens": 199_900, "output_tokens": 100}
    body = anthropic_sse_body(text="It goes on and", stop_reason="model_context_window_exceeded", usage=usage)
    server.enqueue(SSEResponse(body))
    provider = AnthropicProvider(base_url=server.base_url, model="claude", api_key="sk-ant-test", client=client)
    text, error = await failure(provider)
    assert text == "It goes on and"
    assert error.startswith(f"{FITS_NO_LONGER} (200000 tokens).")


async def test_anthropic_stopping_at_max_tokens_is_a_cut_answer_not_a_full_context(server, client):
    server.enqueue(SSEResponse(anthropic_sse_body(text="Cut here", stop_reason="max_tokens")))
    provider = AnthropicProvider(base_url=server.base_url, model="claude", api_key="sk-ant-test", client=client)
    events = [event async for event in provider.stream(list(HELLO), [])]
    assert events[-1] == Finish("length")


async def test_another_invalid_request_keeps_the_servers_own_words(server, client):
    server.enqueue(
        ErrorResponse(400, {"error": {"message": "model 'gpt-9' not found", "type": "invalid_request_error"}})
    )
    provider = OpenAIProvider(base_url=server.base_url, model="m", client=client)
    _, error = await failure(provider)
    assert "model 'gpt-9' not found" in error
    assert "context" not in error
