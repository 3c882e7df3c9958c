"""Text that cannot be stored (a lone surrogate: what a browser's JSON.stringify writes for half an emoji) gets a
clear error and changes nothing; opening a turn is all-or-nothing; Stop ends a run that no task runs."""

import json
import uuid

import pytest
from django.utils import timezone

from chat import store
from chat.models import Message, Run, Thread, ToolCall
from tests.chat.test_runs_with_model_server import answer, calls
from tests.support.model_server import SSEResponse

pytestmark = pytest.mark.django_db(transaction=True)

HALF_AN_EMOJI = "x\ud800y"


async def test_a_message_with_a_lone_surrogate_is_refused_and_writes_nothing(connect, owner):
    client = await connect(owner)
    await client.ask(HALF_AN_EMOJI, ref="r-1")
    error = await client.receive()
    assert (error["type"], error["code"], error["ref"]) == ("error", "bad_frame", "r-1")
    assert "content" in error["message"] and "Unicode" in error["message"]
    assert await Thread.objects.acount() == await Run.objects.acount() == 0


async def test_a_thread_takes_a_message_after_one_that_was_refused_for_its_text(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    thread_id = (await client.run_to_end())[0]["thread"]
    await client.ask(HALF_AN_EMOJI, thread=thread_id)
    assert (await client.receive())["code"] == "bad_frame"
    await client.ask("hello again", thread=thread_id)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"


async def test_an_edit_with_a_lone_surrogate_is_refused_and_keeps_the_message(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    thread_id = (await client.run_to_end())[0]["thread"]
    await client.send(
        type="message.edit_last", thread=thread_id, content=HALF_AN_EMOJI, client_msg_id=str(uuid.uuid4())
    )
    assert (await client.receive())["code"] == "bad_frame"
    assert await Message.objects.filter(role="user").values_list("content", flat=True).aget() == "hello"
    assert await Run.objects.acount() == 1


async def test_a_reply_to_an_approval_with_a_lone_surrogate_is_refused_and_the_call_still_waits(
    connect, owner, calculator_needs_approval
):
    client = await connect(owner)
    await client.ask("what is 2+2?")
    waiting = await client.until("run.waiting")
    call = waiting[-1]["tool_calls"][0]
    await client.send(type="tool_call.decide", tool_call=call, decision="respond", message=HALF_AN_EMOJI)
    assert (await client.receive())["code"] == "bad_frame"
    await client.send(type="tool_call.decide", tool_call=call, decision="approve")
    assert (await client.run_to_end())[-1]["type"] == "run.completed"


def test_a_turn_whose_message_cannot_be_written_leaves_no_thread_and_no_run(owner):
    with pytest.raises(UnicodeEncodeError):
        store.start_turn(user=owner, thread_id=None, content=HALF_AN_EMOJI, client_msg_id=uuid.uuid4(), step_limit=5)
    assert Thread.objects.count() == Run.objects.count() == 0


def test_a_turn_on_a_thread_whose_message_cannot_be_written_leaves_no_run_active(owner):
    thread = Thread.objects.create(owner=owner, title="t")
    with pytest.raises(UnicodeEncodeError):
        store.start_turn(
            user=owner, thread_id=str(thread.pk), content=HALF_AN_EMOJI, client_msg_id=uuid.uuid4(), step_limit=5
        )
    assert not Run.objects.filter(thread=thread).exists()


async def test_stop_ends_a_run_that_no_task_runs_and_the_thread_goes_on(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    thread_id = (await client.run_to_end())[0]["thread"]
    # A run left running with nothing running it (as a failure between opening a turn and starting its task did).
    orphan = await Run.objects.acreate(thread_id=thread_id, step_limit=5, heartbeat_at=timezone.now())
    await client.send(type="run.cancel", thread=thread_id)
    assert (await client.until("run.cancelled"))[-1]["run"] == orphan.pk
    assert (await Run.objects.aget(pk=orphan.pk)).status == "cancelled"
    await client.ask("hello again", thread=thread_id)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"


# What a model server may send (JSON escapes of half an emoji, a NUL): untrusted text, stored with U+FFFD in place.
def model_chunk(delta: dict, finish_reason=None) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}) + "\n\n"


async def test_a_model_answer_with_a_lone_surrogate_is_stored_and_shown_with_a_replacement_character(
    connect,
    owner,
    model_server,
):
    body = model_chunk({"role": "assistant", "content": "x\ud800y\x00z"}) + model_chunk({}, "stop") + "data: [DONE]\n\n"
    model_server.enqueue(SSEResponse(body))
    client = await connect(owner)
    await client.ask("hi")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert "".join(e["text"] for e in events if e["type"] == "message.delta") == "x\ufffdy\ufffdz"
    assert await Message.objects.filter(role="assistant").values_list("content", flat=True).aget() == "x\ufffdy\ufffdz"


async def test_tool_arguments_with_a_lone_surrogate_are_stored_with_a_replacement_character(
    connect,
    owner,
    model_server,
):
    model_server.enqueue(calls(("c1", "calculator", {"expression": "1+1", "note": "\ud800"})), answer("2"))
    client = await connect(owner)
    await client.ask("add")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    requested = next(e for e in events if e["type"] == "tool_call.requested")
    assert requested["args"]["expression"] == "1+1"
    assert "\ud800" not in json.dumps(requested["args"], ensure_ascii=False)
    assert "\ud800" not in json.dumps(await ToolCall.objects.values_list("args", flat=True).aget(), ensure_ascii=False)
