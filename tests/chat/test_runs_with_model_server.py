"""Runs against a real local OpenAI-compatible server: the loop, tool errors and model-server failures."""

import asyncio
import base64
import gc
import json
import logging

import pytest
from channels.db import database_sync_to_async
from django.test import Client as PageClient
from django.urls import reverse

from chat.live.coalesce import DeltaCoalescer
from chat.models import Message, Run, ToolCall
from chat.recorder import RunRecorder
from chat.runs import runs_here
from chat.runs.interaction import RunInteraction
from providers.budget import estimate
from providers.types import ChatMessage
from tests.support.model_server import (
    EchoRequest,
    ErrorResponse,
    Hang,
    NDJSONResponse,
    ScriptedModelServer,
    SSEResponse,
    anthropic_sse_body,
    ollama_ndjson_body,
    openai_sse_body,
)
from tests.support.processes import free_port

pytestmark = pytest.mark.django_db(transaction=True)


def calls(*specs):
    return SSEResponse(openai_sse_body(tool_calls=[{"id": i, "name": n, "arguments": a} for i, n, a in specs]))


def answer(text):
    return SSEResponse(openai_sse_body(text=text))


def tool_messages(request):
    return [m for m in request["json"]["messages"] if m["role"] == "tool"]


async def test_parallel_calls_all_run_and_go_back_in_order(connect, owner, model_server):
    model_server.enqueue(
        calls(("c1", "calculator", {"expression": "2+3"}), ("c2", "calculator", {"expression": "4*5"})),
        answer("5 and 20"),
    )
    client = await connect(owner)
    await client.ask("two sums")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    sent_back = tool_messages(model_server.requests[1])
    assert [(m["tool_call_id"], m["content"]) for m in sent_back] == [("c1", "5"), ("c2", "20")]


async def test_a_tool_that_fails_gives_the_model_an_error_and_the_run_goes_on(connect, owner, model_server):
    model_server.enqueue(calls(("c1", "calculator", {"expression": "1/0"})), answer("Division by zero, sorry."))
    client = await connect(owner)
    await client.ask("divide by zero")
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert completed["status"] == "error"
    assert "zero" in completed["content"].lower()
    assert tool_messages(model_server.requests[1])[0]["content"] == completed["content"]
    assert events[-1]["type"] == "run.completed"


async def test_an_unknown_tool_is_answered_with_the_tools_that_exist(connect, owner, model_server):
    model_server.enqueue(calls(("c1", "rm_rf", {})), answer("ok"))
    client = await connect(owner)
    await client.ask("delete everything")
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert completed["status"] == "error"
    assert "calculator" in completed["content"] and "current_time" in completed["content"]


async def test_arguments_that_are_not_json_go_back_as_an_error(connect, owner, model_server):
    model_server.enqueue(calls(("c1", "calculator", '{"expression": "1+')), answer("retrying"))
    client = await connect(owner)
    await client.ask("broken")
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert completed["status"] == "error"
    assert "could not be used" in completed["content"]
    assert "not valid JSON" in completed["content"]


BROKEN_ARGS = '{"expression": "1+'


def sent_calls(request):
    return [c for m in request["json"]["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])]


async def test_arguments_that_are_not_json_are_shown_as_written_and_sent_back_in_the_error_with_empty_arguments(
    connect, owner, model_server
):
    model_server.enqueue(calls(("c1", "calculator", BROKEN_ARGS)), answer("retrying"))
    client = await connect(owner)
    await client.ask("broken")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed", events[-1]
    assert next(e for e in events if e["type"] == "tool_call.requested")["args"] == BROKEN_ARGS
    [call] = sent_calls(model_server.requests[1])
    assert call["function"] == {"name": "calculator", "arguments": "{}"}
    [result] = tool_messages(model_server.requests[1])
    assert "not valid JSON" in result["content"] and BROKEN_ARGS in result["content"]


async def test_arguments_that_are_not_json_are_kept_as_written_in_the_stored_thread(connect, owner, model_server):
    model_server.enqueue(calls(("c1", "calculator", BROKEN_ARGS)), answer("retrying"), answer("later"))
    client = await connect(owner)
    await client.ask("broken")
    thread = (await client.run_to_end())[0]["thread"]
    await client.ask("and now?", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    [call] = sent_calls(model_server.requests[2])  # the history read back from the database
    assert call["function"]["arguments"] == "{}"
    assert BROKEN_ARGS in tool_messages(model_server.requests[2])[0]["content"]
    assert (await ToolCall.objects.aget()).args == BROKEN_ARGS


CUT_ARGS = '{"expression": "23*1'


def cut_in_a_call(api):
    """A step cut off by the output limit while the model writes a call's arguments, in `api`'s wire format
    (Ollama reads calls whole: what it passes on is the broken argument text)."""
    call = {"id": "c1", "name": "calculator", "arguments": CUT_ARGS}
    if api == "openai":
        return SSEResponse(openai_sse_body(tool_calls=[call], finish_reason="length"))
    if api == "anthropic":
        return SSEResponse(anthropic_sse_body(tool_calls=[call], stop_reason="max_tokens"))
    return NDJSONResponse(ollama_ndjson_body(tool_calls=[call], done_reason="length"))


def said(api, text):
    if api == "openai":
        return answer(text)
    if api == "anthropic":
        return SSEResponse(anthropic_sse_body(text=text))
    return NDJSONResponse(ollama_ndjson_body(text=text))


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
async def test_a_call_cut_off_by_the_output_limit_never_poisons_the_thread(connect, owner, model_server, settings, api):
    # The servers refuse a history whose call arguments are not a JSON object (llama-server with a 500, on every
    # later request): the call goes back with {} and the model's text in its error result.
    base_url = model_server.base_url if api == "openai" else model_server.root_url
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "api": api, "base_url": base_url, "max_tokens": 64}
    model_server.enqueue(cut_in_a_call(api), said(api, "Let me try again."), said(api, "Still here."))
    client = await connect(owner)
    await client.ask("23*19?")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed", events[-1].get("error")
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert completed["status"] == "error"
    await client.ask("and now?", thread=events[0]["thread"])
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    assert len(model_server.requests) == 3
    for request in model_server.requests[1:]:  # the run's next step, and the next message's history
        [result] = tool_results(api, request)
        assert "could not be used" in result and CUT_ARGS in result
    assert (await ToolCall.objects.aget()).args == CUT_ARGS


def tool_results(api, request):
    """The contents of the tool results a request sent back."""
    messages = request["json"]["messages"]
    if api == "anthropic":
        blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
        return [b.get("content") for b in blocks if b["type"] == "tool_result"]
    return [m["content"] for m in messages if m["role"] == "tool"]


async def test_a_model_server_that_is_down_fails_the_run_naming_its_url(connect, owner, settings):
    url = f"http://127.0.0.1:{free_port()}/v1"
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "api": "openai", "base_url": url, "model": "m"}
    client = await connect(owner)
    await client.ask("hello")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.failed"
    assert url in events[-1]["error"]
    run = await Run.objects.aget()
    assert (run.status, run.error) == ("failed", events[-1]["error"])


async def test_a_server_error_is_shown_with_what_the_server_said_and_never_the_key(connect, owner, model_server):
    model_server.enqueue(ErrorResponse(500, {"error": {"message": "CUDA out of memory"}}))
    client = await connect(owner)
    await client.ask("hello")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.failed"
    assert "CUDA out of memory" in events[-1]["error"]
    assert "sk-test-key" not in str(events)


async def test_a_key_and_url_credentials_echoed_by_the_server_reach_no_event_page_or_export(connect, owner, settings):
    key, password = "sk-live-SECRET-4f9a8b7c6d5e", "pa55-w0rd"
    # The key starts 12 characters before the 300th character of the server's text, where it is cut.
    echo = "x" * (300 - 12) + f"{key} and alice:{password} are refused"
    with ScriptedModelServer() as server:
        base_url = server.base_url.replace("http://", f"http://alice:{password}@")
        settings.AGENTWEB_LLM = {"api": "openai", "base_url": base_url, "model": "m", "api_key": key}
        server.enqueue(ErrorResponse(401, echo))
        client = await connect(owner)
        await client.ask("hello")
        events = await client.run_to_end()
    assert events[-1]["type"] == "run.failed"
    assert f"The model server at {server.base_url} answered 401" in events[-1]["error"]
    run = await Run.objects.select_related("thread").aget()
    texts = [json.dumps(events), run.error, run.model_label, *await database_sync_to_async(pages)(owner, run.thread)]
    for text in texts:
        assert "sk-live" not in text and "SECRET" not in text and password not in text


async def test_credentials_a_proxy_echoes_back_in_its_error_reach_no_event_snapshot_export_or_log(
    connect, owner, settings, caplog
):
    """A proxy that refuses the request and echoes its headers puts the Basic credentials (base64 of user:password)
    and the Bearer key into its error text; the run's error says what the server answered, without any of them."""
    key, password = "sk-live-SECRET-4f9a8b7c6d5e", "pa55/w0rd+x"
    encoded = base64.b64encode(f"alice:{password}".encode()).decode()
    with ScriptedModelServer() as server:
        base_url = server.base_url.replace("http://", "http://alice:pa55%2Fw0rd%2Bx@")
        settings.AGENTWEB_LLM = {"api": "openai", "base_url": base_url, "model": "m", "api_key": key, "max_attempts": 2}
        server.enqueue(EchoRequest(502), EchoRequest(502))
        client = await connect(owner)
        with caplog.at_level(logging.INFO):
            await client.ask("hello")
            events = await client.run_to_end()
            await client.send(type="thread.subscribe", thread=events[0]["thread"], after_seq=None)
            snapshot = await client.until("thread.snapshot")
        sent = server.requests[0]["headers"]["Authorization"]
    assert sent == f"Basic {encoded}"  # what the proxy got, and echoed
    error = events[-1]["error"]
    assert error.startswith(f"The model server at {server.base_url} answered 502 Bad Gateway: Upstream refused")
    assert "Authorization: ***" in error
    run = await Run.objects.select_related("thread").aget()
    assert snapshot[-1]["run"]["error"] == run.error == error
    texts = [json.dumps(events), json.dumps(snapshot), *await database_sync_to_async(pages)(owner, run.thread)]
    texts.append(caplog.text)
    assert "attempt 1 of 2 failed" in caplog.text  # the retry's log line quotes the error too
    for text in texts:
        for secret in (encoded, encoded[:12], key, "SECRET", password, "pa55%2Fw0rd", "pa55"):
            assert secret not in text


async def test_an_error_recorded_before_url_credentials_were_kept_out_is_shown_without_them(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    thread = (await client.run_to_end())[0]["thread"]
    await Run.objects.aupdate(status="failed", error="The model server at http://alice:pa55-w0rd@h/v1 failed.")
    await client.send(type="thread.subscribe", thread=thread, after_seq=None)
    snapshot = await client.until("thread.snapshot")
    assert snapshot[-1]["run"]["error"] == "The model server at http://h/v1 failed."


def pages(user, thread):
    """The thread's page and its two exports, as its owner gets them."""
    http = PageClient()
    http.force_login(user)
    urls = [reverse(name, args=[thread.pk]) for name in ("chat:thread", "sharing:export_json", "sharing:export_md")]
    return [http.get(url).getvalue().decode() for url in urls]


def cut_before_its_end(api, text):
    """A whole answer of `api`'s wire format, and the same stream closed cleanly before its normal ending
    (finish_reason and [DONE]; content_block_stop, message_delta and message_stop; the done: true line)."""
    if api == "openai":
        whole = openai_sse_body(text=text)
        kept = [event for event in whole.split("\n\n") if '"finish_reason":null' in event]
        return SSEResponse(whole), SSEResponse("".join(event + "\n\n" for event in kept))
    if api == "anthropic":
        whole = anthropic_sse_body(text=text)
        return SSEResponse(whole), SSEResponse(whole.split("event: content_block_stop")[0])
    whole = ollama_ndjson_body(text=text)
    return NDJSONResponse(whole), NDJSONResponse("".join(whole.splitlines(True)[:-1]))


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
async def test_an_answer_the_server_ends_early_fails_with_its_text_kept_and_retry_answers_afresh(
    connect, owner, model_server, settings, api
):
    whole, cut = cut_before_its_end(api, "The answer is forty-two.")
    base_url = model_server.base_url if api == "openai" else model_server.root_url
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "api": api, "base_url": base_url}
    model_server.enqueue(cut, whole)
    client = await connect(owner)
    await client.ask("what is the answer?")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.failed"
    assert "ended the answer early" in events[-1]["error"]
    failed = await Message.objects.aget(role="assistant")
    assert failed.status == "error" and failed.content.startswith("The answer is")
    await client.send(type="run.retry", thread=events[0]["thread"])
    retried = await client.run_to_end()
    assert retried[-1]["type"] == "run.completed"
    answer = await Message.objects.filter(role="assistant").exclude(pk=failed.pk).aget()
    assert (answer.status, answer.content) == ("complete", "The answer is forty-two.")


def assistant_texts(request):
    return [m["content"] for m in request["json"]["messages"] if m["role"] == "assistant"]


async def test_a_retry_after_stop_replaces_the_stopped_answer_in_what_the_model_is_sent(connect, owner, model_server):
    model_server.enqueue(Hang(prelude=b'data: {"choices":[{"index":0,"delta":{"content":"Half an ans"}}]}\n\n'))
    model_server.enqueue(answer("A whole answer."), answer("Sure."))
    client = await connect(owner)
    await client.ask("tell me something")
    thread = (await client.until("message.delta"))[0]["thread"]
    await client.send(type="run.cancel", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.cancelled"
    await client.send(type="run.retry", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    assert assistant_texts(model_server.requests[1]) == []
    await client.ask("and more?", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    assert assistant_texts(model_server.requests[2]) == ["A whole answer."]


async def test_a_stopped_answer_the_person_replied_to_stays_in_what_the_model_is_sent(connect, owner, model_server):
    model_server.enqueue(Hang(prelude=b'data: {"choices":[{"index":0,"delta":{"content":"Half an ans"}}]}\n\n'))
    model_server.enqueue(answer("Sorry."))
    client = await connect(owner)
    await client.ask("tell me something")
    thread = (await client.until("message.delta"))[0]["thread"]
    await client.send(type="run.cancel", thread=thread)
    await client.run_to_end()
    await client.ask("why did you stop?", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    assert assistant_texts(model_server.requests[1]) == ["Half an ans"]


async def test_retries_that_fail_before_answering_leave_one_failed_answer_not_one_each(connect, owner, model_server):
    refused = [ErrorResponse(404, {"error": {"message": "no such model"}}) for _ in range(3)]
    model_server.enqueue(*refused, answer("Here now."))
    client = await connect(owner)
    await client.ask("hello")
    thread = (await client.run_to_end())[0]["thread"]
    for _ in range(2):
        await client.send(type="run.retry", thread=thread)
        retried = await client.run_to_end()
        assert retried[-1]["type"] == "run.failed"
        assert not [e for e in retried if e["type"].startswith("message.")]  # nothing new to show
    shown = [(m.status, m.content) async for m in Message.objects.filter(role="assistant").order_by("order")]
    assert shown == [("error", "")]
    await client.send(type="run.retry", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    shown = [(m.status, m.content) async for m in Message.objects.filter(role="assistant").order_by("order")]
    assert shown == [("error", ""), ("complete", "Here now.")]


async def test_a_failed_run_keeps_the_question_and_the_thread_goes_on(connect, owner, model_server):
    model_server.enqueue(ErrorResponse(500, {"error": {"message": "overloaded"}}), answer("Back again."))
    client = await connect(owner)
    await client.ask("hello")
    thread = (await client.run_to_end())[0]["thread"]
    await client.ask("again?", thread=thread)
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert await Message.objects.filter(role="user").acount() == 2


async def test_a_model_that_keeps_sending_unreadable_calls_is_stopped_with_a_clear_reason(connect, owner, model_server):
    model_server.enqueue(*[calls(("c1", "calculator", '{"expression": ')) for _ in range(4)])
    client = await connect(owner)
    await client.ask("broken forever")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.failed"
    assert "could not be read 4 times" in events[-1]["error"]
    assert len(model_server.requests) == 4


LEAKED = 'Let me compute. <tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}</tool_call>'


async def test_a_tool_call_leaking_into_native_text_runs_with_a_note(connect, owner, model_server):
    model_server.enqueue(SSEResponse(openai_sse_body(text=LEAKED)), answer("42"))
    client = await connect(owner)
    await client.ask("six times seven")
    events = await client.run_to_end()
    streamed = "".join(e["text"] for e in events if e["type"] == "message.delta")
    assert "<tool_call>" not in streamed
    assert next(e for e in events if e["type"] == "tool_call.completed")["content"] == "42"
    assert "tool_call" in next(e for e in events if e["type"] == "run.note")["text"]
    assert (await Run.objects.aget()).notes


async def test_the_hermes_protocol_puts_tools_in_the_prompt_and_parses_calls_from_text(
    connect, owner, model_server, settings
):
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "tool_protocol": "hermes"}
    model_server.enqueue(SSEResponse(openai_sse_body(text=LEAKED)), answer("It is 42."))
    client = await connect(owner)
    await client.ask("six times seven")
    events = await client.run_to_end()
    first, second = model_server.requests[0]["json"], model_server.requests[1]["json"]
    assert "tools" not in first
    assert "<tools>" in first["messages"][0]["content"] and "calculator" in first["messages"][0]["content"]
    assert "<tool_response>" in second["messages"][-1]["content"]
    assert next(e for e in events if e["type"] == "tool_call.completed")["content"] == "42"
    assert not [e for e in events if e["type"] == "run.note"]


async def test_a_hermes_call_that_cannot_be_read_goes_back_to_the_model_as_it_wrote_it(
    connect, owner, model_server, settings
):
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "tool_protocol": "hermes"}
    written = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "6*7}\n</tool_call>'
    model_server.enqueue(SSEResponse(openai_sse_body(text=written)), answer("Sorry."))
    client = await connect(owner)
    await client.ask("six times seven")
    events = await client.run_to_end()
    assert next(e for e in events if e["type"] == "tool_call.requested")["args"] == written
    second = model_server.requests[1]["json"]["messages"]
    assert second[-2] == {"role": "assistant", "content": written}
    assert '"status": "error"' in second[-1]["content"]


async def test_with_the_hermes_protocol_a_tool_response_the_model_copies_is_neither_shown_nor_stored(
    connect, owner, model_server, settings
):
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "tool_protocol": "hermes"}
    copied = '<tool_response>\n{"name": "calculator", "content": "42"}\n</tool_response>\nSix times seven is 42.'
    model_server.enqueue(SSEResponse(openai_sse_body(text=LEAKED)), answer(copied))
    client = await connect(owner)
    await client.ask("six times seven")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    answer_id = [e for e in events if e["type"] == "message.started"][-1]["message"]["id"]
    streamed = "".join(e["text"] for e in events if e["type"] == "message.delta" and e["message"] == answer_id)
    assert streamed == "Six times seven is 42."
    stored = await Message.objects.filter(role="assistant").order_by("-order").afirst()
    assert stored.content == "Six times seven is 42."


@pytest.fixture
def hanging_http_tool(db):
    """An admin-defined HTTP tool whose server accepts the request and never answers."""
    import socket

    from tools.models import AllowedHost, HttpTool

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    AllowedHost.objects.create(host="127.0.0.1", note="the test's hanging server")
    HttpTool.objects.create(
        name="slow_lookup",
        description="Look something up slowly.",
        parameters={"type": "object", "properties": {}, "required": []},
        url_template=f"http://127.0.0.1:{listener.getsockname()[1]}/lookup",
        timeout=60,
    )
    yield
    listener.close()


async def test_stop_during_a_tool_cancels_it_at_once_and_the_thread_goes_on(
    connect, owner, model_server, hanging_http_tool
):
    model_server.enqueue(calls(("c1", "slow_lookup", {})))
    client = await connect(owner)
    await client.ask("look it up")
    running = await client.until("tool_call.running")
    await client.send(type="run.cancel", thread=running[0]["thread"])
    events = await client.run_to_end()
    assert [(e["type"], e.get("status")) for e in events] == [
        ("tool_call.completed", "cancelled"),
        ("run.cancelled", None),
    ]
    call = await ToolCall.objects.aget()
    assert call.status == "cancelled"
    model_server.enqueue(answer("Back."))
    await client.ask("anything else?", thread=running[0]["thread"])
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    # The cancelled call was answered in the history the model saw next.
    tool_results = tool_messages(model_server.requests[-1])
    assert [m["tool_call_id"] for m in tool_results] == ["c1"]


THINKING = (
    "<think>23*19 is big; use the tool.</think>"
    '<tool_call>{"name": "calculator", "arguments": {"expression": "23*19"}}</tool_call>'
)


async def test_thinking_is_separated_streamed_stored_and_never_sent_back(connect, owner, model_server):
    model_server.enqueue(SSEResponse(openai_sse_body(text=THINKING)), answer("437."))
    client = await connect(owner)
    await client.ask("what is 23*19?")
    events = await client.run_to_end()
    thought = "".join(e["text"] for e in events if e["type"] == "message.reasoning_delta")
    assert thought == "23*19 is big; use the tool."
    assert "think" not in "".join(e["text"] for e in events if e["type"] == "message.delta")
    stored = await Message.objects.filter(role="assistant").order_by("order").afirst()
    assert stored.reasoning == thought
    sent_back = [m for m in model_server.requests[1]["json"]["messages"] if m["role"] == "assistant"]
    assert "big" not in json.dumps(sent_back)

    await client.send(type="thread.subscribe", thread=events[0]["thread"], after_seq=None)
    snapshot = await client.until("thread.snapshot")
    assert snapshot[-1]["messages"][1]["reasoning"] == thought


async def test_memory_tools_keep_facts_for_the_user_across_threads_and_not_for_others(
    connect, owner, stranger, model_server
):
    model_server.enqueue(
        calls(("c1", "remember", {"key": "favourite_colour", "value": "teal"})),
        answer("Noted."),
        calls(("c2", "recall", {"key": "favourite_colour"})),
        answer("Teal."),
        calls(("c3", "recall", {"key": "favourite_colour"})),
        answer("I don't know."),
    )
    client = await connect(owner)
    await client.ask("remember that my favourite colour is teal")
    await client.run_to_end()
    await client.ask("what is my favourite colour?")
    recalled = await client.run_to_end()
    assert "teal" in next(e for e in recalled if e["type"] == "tool_call.completed")["content"]

    intruder = await connect(stranger)
    await intruder.ask("what is my favourite colour?")
    theirs = await intruder.run_to_end()
    assert "teal" not in next(e for e in theirs if e["type"] == "tool_call.completed")["content"]


# --- the model's context window (providers/budget.py, providers/context.py) ------------------------------


async def test_with_a_text_protocol_what_is_sent_fits_the_context_window_tool_prompt_included(
    connect, owner, model_server, settings
):
    window, reserve = 2048, 256
    settings.AGENTWEB_LLM = {
        **settings.AGENTWEB_LLM,
        "tool_protocol": "xml",
        "context_window": window,
        "max_tokens": reserve,
    }
    # A first answer of 900 tokens: with the tool schemas counted as native fields it all fits, with the xml
    # protocol's tool instructions (what is really sent) it does not.
    model_server.enqueue(answer("x" * 3600), answer("ok"))
    client = await connect(owner)
    await client.ask("tell me a lot")
    thread = (await client.run_to_end())[0]["thread"]
    await client.ask("and now?", thread=thread)
    await client.run_to_end()
    sent = [ChatMessage(m["role"], m["content"]) for m in model_server.requests[1]["json"]["messages"]]
    assert estimate(sent) <= window - reserve


async def test_a_conversation_too_long_for_the_model_fails_with_what_to_do(connect, owner, model_server):
    error = {
        "code": 400,
        "message": "request (2137 tokens) exceeds the available context size (2048 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 2137,
        "n_ctx": 2048,
    }
    model_server.enqueue(ErrorResponse(400, {"error": error}))
    client = await connect(owner)
    await client.ask("a very long paste")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.failed"
    assert events[-1]["error"].startswith("This conversation no longer fits the model's context (2048 tokens).")
    assert "Start a new chat" in events[-1]["error"]
    assert len(model_server.requests) == 1


async def test_a_finished_run_is_freed_as_it_ends_not_by_a_garbage_collection(connect, owner, model_server):
    """Its recorder, coalescer and interaction (and the answer's text they hold) are in no reference cycle, so they do
    not wait for a collection, which a worker makes rare (agentweb/tuning.py)."""
    model_server.enqueue(calls(("c1", "calculator", {"expression": "2+3"})), answer("Five, " * 100))
    client = await connect(owner)
    gc.collect()
    gc.disable()
    try:
        await client.ask("a sum")
        events = await client.run_to_end()
        for _ in range(500):  # the run's task ends just after its last event
            if not runs_here().active:
                break
            await asyncio.sleep(0.01)
        left = [
            type(o).__name__ for o in gc.get_objects() if isinstance(o, RunRecorder | DeltaCoalescer | RunInteraction)
        ]
    finally:
        gc.enable()
    assert events[-1]["type"] == "run.completed"
    assert left == []


async def test_the_transport_setting_is_the_one_model_servers_are_read_with(connect, owner, model_server, settings):
    settings.AGENTWEB_LLM_TRANSPORT = "carrier-pigeon"  # AGENTWEB_LLM_TRANSPORT: settings read it, the run is given it
    model_server.enqueue(answer("never sent"))
    client = await connect(owner)
    await client.ask("hello")
    events = await client.run_to_end()

    # An unknown transport is refused where the client is made, so no request goes out.
    assert (events[-1]["type"], events[-1]["error"]) == (
        "run.failed",
        "The run stopped on an internal error (ValueError); see the server log.",
    )
    assert model_server.requests == []
