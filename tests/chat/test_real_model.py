"""The app against a real model server: llama.cpp's llama-server running SmolLM2-135M-Instruct.

Run by `make test-real-model` only, which builds and caches the server and the model first
(tests/support/real_model.py); a plain `pytest` deselects these tests (marker `real_model`). They never
skip: a server that is missing or does not start fails them, with the reason.

A 135M model does not call tools of its own accord, so on the request that must call one the test makes
llama-server do it: `tool_choice: "required"` and an assistant prefill `<tool_call>\\n` make its grammar
force a real call, streamed as real `tool_calls` deltas. That is added to the request body by the test
alone (see `forced_tool_call`); the app's own requests are unchanged.
"""

import pytest

from chat.models import Message, Run, ToolCall
from providers.openai import OpenAIProvider
from tests.support import real_model
from tests.support.processes import free_port

pytestmark = [pytest.mark.real_model, pytest.mark.django_db(transaction=True)]

TERMINAL = ("run.completed", "run.failed", "run.cancelled")
CONTEXT = 2048
SENTENCE = "The quick brown fox jumps over the lazy dog. "  # about 10 tokens
#: A real model on a busy machine: generous waits for each event (they bound a hang, not the speed).
EVENT_TIMEOUT = 300


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    found = real_model.cached()
    if found is None:
        pytest.fail(
            f"The real model server is not in {real_model.cache_root()}: run `make test-real-model`, which builds it."
        )
    log_file = tmp_path_factory.mktemp("llama-server") / "server.log"
    try:
        with real_model.serve(found, free_port(), context=CONTEXT, log_file=log_file) as base_url:
            yield base_url
    except real_model.Unavailable as exc:
        pytest.fail(str(exc))


@pytest.fixture
def real_model_settings(settings, llama_server):
    settings.AGENTWEB_LLM = {
        "api": "openai",
        "base_url": llama_server,
        "model": "SmolLM2-135M-Instruct",
        "api_key": "",
        "tool_protocol": "native",
        "max_tokens": 128,  # short answers keep the tests quick on a small CPU
        "temperature": 0,
    }
    settings.AGENTWEB_MAX_STEPS = 2
    return settings


@pytest.fixture
def only_the_calculator(db):
    """The admin leaves only the calculator enabled: the call the server is made to write is a calculator call."""
    from tools.models import ToolSetting, bump_settings_stamp
    from tools.services import sync_tool_settings

    sync_tool_settings()
    ToolSetting.objects.exclude(name="calculator").update(enabled=False)
    bump_settings_stamp()


@pytest.fixture
def forced_tool_call(monkeypatch):
    """Requests whose last message is the person's are sent so that llama-server must call a tool.

    Returns the request bodies the app sent, in order.
    """
    original = OpenAIProvider.request_body
    bodies = []

    def request_body(self, messages, tools):
        body = original(self, messages, tools)
        if tools and messages[-1].role == "user":
            body["tool_choice"] = "required"
            body["messages"].append({"role": "assistant", "content": "<tool_call>\n"})
        bodies.append(body)
        return body

    monkeypatch.setattr(OpenAIProvider, "request_body", request_body)
    return bodies


@pytest.fixture
def endless_answer(monkeypatch):
    """The model cannot end its answer (llama-server's `ignore_eos`): it writes until a limit stops it, as a model
    that does not stop counting would. Without it a 135M model sometimes ends early, and the test says nothing."""
    original = OpenAIProvider.request_body

    def request_body(self, messages, tools):
        return {**original(self, messages, tools), "ignore_eos": True}

    monkeypatch.setattr(OpenAIProvider, "request_body", request_body)


async def run_to_end(client):
    return await client.until(*TERMINAL, timeout=EVENT_TIMEOUT)


async def test_a_streamed_answer_is_stored_exactly_as_streamed(connect, owner, real_model_settings):
    client = await connect(owner)
    await client.ask("Say hello in one short sentence.")
    events = await run_to_end(client)
    assert events[-1]["type"] == "run.completed", events[-1]
    streamed = "".join(e["text"] for e in events if e["type"] == "message.delta")
    stored = await Message.objects.aget(role="assistant")
    assert streamed.strip()
    assert stored.content == streamed
    assert stored.status == "complete"


async def test_a_native_tool_loop_runs_the_call_and_the_follow_up_is_answered(
    connect, owner, real_model_settings, only_the_calculator, forced_tool_call
):
    client = await connect(owner)
    await client.ask("Use the calculator to work out 23*19.")
    events = await run_to_end(client)
    assert events[-1]["type"] == "run.completed", events[-1]
    started = [e for e in events if e["type"] == "tool_call.started"]
    assert [e["tool_call"]["name"] for e in started][:1] == ["calculator"]
    call = await ToolCall.objects.aget(call_id=started[0]["tool_call"]["call_id"])
    print("the calls:", [e["tool_call"]["name"] for e in started], call.args, call.result)  # what a 135M model wrote
    assert call.status == "success"
    # The follow-up carried the result back, as a tool message for the call, and the server answered it.
    result = await Message.objects.aget(role="tool", tool_call_id=call.call_id)
    follow_up = forced_tool_call[1]["messages"]
    [calling] = [m for m in follow_up if m["role"] == "assistant" and m.get("tool_calls")]
    assert calling["tool_calls"][0]["id"] == call.call_id
    results = {m["tool_call_id"]: m["content"] for m in follow_up if m["role"] == "tool"}
    assert results[call.call_id] == result.content
    answers = [m async for m in Message.objects.filter(role="assistant").order_by("pk")]
    assert len(answers) == 2 and answers[1].status == "complete"


async def test_a_conversation_that_outgrows_the_context_fails_saying_what_to_do(connect, owner, real_model_settings):
    client = await connect(owner)
    await client.ask("Hello!")
    first = await run_to_end(client)
    assert first[-1]["type"] == "run.completed", first[-1]
    long_paste = SENTENCE * 300  # about 3,000 tokens
    await client.ask(long_paste, thread=first[0]["thread"])
    events = await run_to_end(client)
    assert events[-1]["type"] == "run.failed"
    error = events[-1]["error"]
    assert error.startswith(f"This conversation no longer fits the model's context ({CONTEXT} tokens).")
    assert "Start a new chat" in error
    run = await Run.objects.order_by("-pk").afirst()
    assert (run.status, run.error) == ("failed", error)


async def test_with_the_hermes_protocol_the_tool_prompt_is_counted_and_the_conversation_goes_on(
    connect, owner, real_model_settings
):
    # The model's window is set: the oldest messages are left out so that what is sent, the ~1,000 tokens of
    # tool instructions in the system prompt included, fits 2,048 tokens.
    real_model_settings.AGENTWEB_LLM = {
        **real_model_settings.AGENTWEB_LLM,
        "tool_protocol": "hermes",
        "context_window": CONTEXT,
    }
    client = await connect(owner)
    await client.ask("Read this and tell me what the fox does. " + SENTENCE * 45)
    first = await run_to_end(client)
    assert first[-1]["type"] == "run.completed", first[-1]
    await client.ask("And this one? " + SENTENCE * 45, thread=first[0]["thread"])
    events = await run_to_end(client)
    assert events[-1]["type"] == "run.completed", events[-1]
    assert "left out to fit the model's context window" in next(e for e in events if e["type"] == "run.note")["text"]


#: An output limit that ends the forced call inside its arguments: `{"name": "calculator", "arguments": {"` is
#: about a dozen tokens.
CUT_IN_THE_ARGUMENTS = 14


async def test_a_call_cut_off_by_the_output_limit_leaves_the_thread_usable(
    connect, owner, real_model_settings, only_the_calculator, forced_tool_call
):
    # The call is not run; the history sent back carries it with {} and the model's text in its error result, which
    # llama-server accepts (the model's own broken text as the call's arguments got a 500 on every later request).
    real_model_settings.AGENTWEB_LLM = {**real_model_settings.AGENTWEB_LLM, "max_tokens": CUT_IN_THE_ARGUMENTS}
    client = await connect(owner)
    await client.ask("Use the calculator to work out 23*19.")
    events = await run_to_end(client)
    assert events[-1]["type"] == "run.completed", events[-1].get("error")
    call = await ToolCall.objects.order_by("pk").afirst()
    print("the cut call:", repr(call.args), call.error)  # what the 135M model wrote before the limit
    assert call.name == "calculator" and isinstance(call.args, str)  # cut: the model's own text, never run
    assert call.status == "error" and "ran out of output tokens" in call.error
    follow_up = forced_tool_call[1]["messages"]
    [calling] = [m for m in follow_up if m["role"] == "assistant" and m.get("tool_calls")]
    assert calling["tool_calls"][0]["function"]["arguments"] == "{}"
    [result] = [m["content"] for m in follow_up if m["role"] == "tool"]
    assert call.args in result
    # And the chat goes on: a new message is answered (its history carries the cut call the same way).
    await client.ask("Thanks. Now say hello.", thread=events[0]["thread"])
    events = await run_to_end(client)
    assert events[-1]["type"] == "run.completed", events[-1].get("error")


async def test_an_answer_that_runs_to_the_end_of_the_context_without_an_output_limit_says_to_set_one(
    connect, owner, real_model_settings, endless_answer
):
    # No output limit: the model writes until the context is full. The message was short: the person is told to set
    # an output limit, not to shorten it.
    real_model_settings.AGENTWEB_LLM = {**real_model_settings.AGENTWEB_LLM, "max_tokens": None}
    client = await connect(owner)
    await client.ask("Count from 1 to 5000, one number per line, and do not stop.")
    events = await run_to_end(client)
    assert events[-1]["type"] == "run.failed", events[-1]
    error = events[-1]["error"]
    print("the error:", error)
    assert error.startswith(f"The answer filled the model's context ({CONTEXT} tokens: "), error
    assert "no output limit is set for this model" in error and "max output tokens" in error
    assert "shorter" not in error


async def test_an_output_limit_larger_than_the_room_left_in_the_context_is_said_so(
    connect, owner, real_model_settings, endless_answer
):
    # An output limit is set, but larger than the whole context: the answer stops at the end of the context, short of
    # the limit. llama-server's /props says the context's size, so the person is told the limit is too large, not that
    # the answer was cut at it.
    real_model_settings.AGENTWEB_LLM = {**real_model_settings.AGENTWEB_LLM, "max_tokens": 2 * CONTEXT}
    client = await connect(owner)
    await client.ask("Count from 1 to 5000, one number per line, and do not stop.")
    events = await run_to_end(client)
    assert events[-1]["type"] == "run.failed", events[-1]
    error = events[-1]["error"]
    print("the error:", error)
    assert error.startswith(f"The answer filled the model's context ({CONTEXT} tokens: "), error
    assert f"its output limit ({2 * CONTEXT} tokens) is larger than the room the context had left" in error
