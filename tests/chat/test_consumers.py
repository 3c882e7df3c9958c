"""The websocket contract (docs/protocol.md) through the real consumer, channel layer and database."""

import json
import uuid

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from chat.consumers import ChatConsumer
from chat.models import Message, Run, Thread, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


def types(events):
    return [event["type"] for event in events]


async def test_it_closes_an_unauthenticated_socket_with_4401():
    communicator = WebsocketCommunicator(ChatConsumer.as_asgi(), "/ws/chat/")
    communicator.scope["user"] = AnonymousUser()
    await communicator.connect()
    closed = await communicator.receive_output(timeout=2)
    assert closed == {"type": "websocket.close", "code": 4401}


async def test_it_answers_ping_with_pong(connect, owner):
    client = await connect(owner)
    await client.send(type="ping")
    assert await client.receive() == {"type": "pong"}


async def test_it_reports_a_frame_that_is_not_json_and_stays_open(connect, owner):
    client = await connect(owner)
    await client.send_raw("{not json")
    error = await client.receive()
    assert (error["type"], error["code"]) == ("error", "bad_json")
    await client.send(type="ping")
    assert (await client.receive())["type"] == "pong"


async def test_it_echoes_the_ref_of_an_unknown_frame_type(connect, owner):
    client = await connect(owner)
    await client.send(type="thread.delete", ref="r-1")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("unknown_type", "r-1")


async def test_it_names_the_missing_field(connect, owner):
    client = await connect(owner)
    await client.send(type="message.send", thread=None, client_msg_id=str(uuid.uuid4()))
    error = await client.receive()
    assert error["code"] == "bad_frame"
    assert "content" in error["message"]


async def test_it_refuses_a_frame_over_the_size_limit_and_writes_nothing(connect, owner, settings):
    settings.AGENTWEB_MAX_FRAME_BYTES = 1000
    client = await connect(owner)
    await client.ask("x" * 2000)
    error = await client.receive()
    assert error["code"] == "frame_too_large"
    assert not await Message.objects.aexists()


async def test_it_refuses_an_empty_message(connect, owner):
    client = await connect(owner)
    await client.ask("   \n ")
    assert (await client.receive())["code"] == "bad_frame"
    assert not await Thread.objects.aexists()


async def test_a_demo_turn_calls_the_calculator_and_answers(connect, owner):
    client = await connect(owner)
    await client.ask("what is 23*19?")
    events = await client.run_to_end()

    assert types(events)[:2] == ["thread.created", "run.started"]
    completed_calls = [e for e in events if e["type"] == "tool_call.completed"]
    assert [(c["status"], c["content"]) for c in completed_calls] == [("success", "437")]
    answers = [e for e in events if e["type"] == "message.completed"]
    assert "437" in answers[-1]["content"]
    assert "demo" in answers[-1]["content"].lower()
    assert events[-1] == {**events[-1], "type": "run.completed", "reason": "done"}


async def test_run_started_names_the_message_each_turn_sent(connect, owner):
    # A tab shows its message before the server stores it; run.started gives that bubble its id.
    client = await connect(owner)
    await client.ask("what is 2+2?")
    events = await client.run_to_end()
    thread_id = events[0]["thread"]
    await client.ask("and 3+3?", thread=thread_id)
    second = await client.run_to_end()

    started = [e for e in events + second if e["type"] == "run.started"]
    stored = [m.pk async for m in Message.objects.filter(thread_id=thread_id, role="user").order_by("order")]
    assert [e["message"] for e in started] == stored


async def test_another_tab_of_the_thread_gets_the_sent_message_with_run_started(connect, owner):
    first = await connect(owner)
    await first.ask("what is 2+2?")
    thread_id = (await first.run_to_end())[0]["thread"]
    other_tab = await connect(owner)
    await other_tab.send(type="thread.subscribe", thread=thread_id, after_seq=None)
    await other_tab.until("thread.snapshot")

    sent = await first.ask("and 3+3?", thread=thread_id)
    started = next(e for e in await other_tab.run_to_end() if e["type"] == "run.started")

    stored = await Message.objects.aget(thread_id=thread_id, content="and 3+3?")
    assert started["user_message"] == {
        "id": stored.pk,
        "role": "user",
        "content": "and 3+3?",
        "status": "complete",
        "client_msg_id": sent,
    }


async def test_every_event_of_a_turn_is_numbered_one_after_another(connect, owner):
    client = await connect(owner)
    await client.ask("what is 2+2?")
    events = await client.run_to_end()
    seqs = [event["seq"] for event in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


async def test_the_streamed_deltas_add_up_to_the_stored_message(connect, owner):
    client = await connect(owner)
    await client.ask("hello there")
    events = await client.run_to_end()
    streamed = "".join(e["text"] for e in events if e["type"] == "message.delta")
    stored = await Message.objects.aget(role="assistant")
    assert streamed == stored.content
    assert stored.status == "complete"


async def test_a_turn_is_stored_with_its_tool_call_and_result(connect, owner):
    client = await connect(owner)
    await client.ask("what is 23*19?")
    await client.run_to_end()
    call = await ToolCall.objects.aget()
    assert (call.name, call.args, call.status, call.result) == ("calculator", {"expression": "23*19"}, "success", "437")
    tool_message = await Message.objects.aget(role="tool")
    assert (tool_message.tool_call_id, tool_message.content) == (call.call_id, "437")
    run = await Run.objects.aget()
    assert (run.status, run.reason, run.steps) == ("completed", "done", 2)


async def test_a_subscriber_gets_a_snapshot_of_the_finished_turn(connect, owner):
    client = await connect(owner)
    await client.ask("what is 23*19?")
    events = await client.run_to_end()
    thread_id = events[0]["thread"]

    other_tab = await connect(owner)
    await other_tab.send(type="thread.subscribe", thread=thread_id, after_seq=None)
    snapshot = await other_tab.receive()
    assert snapshot["type"] == "thread.snapshot"
    assert snapshot["seq"] == events[-1]["seq"]
    assert [m["role"] for m in snapshot["messages"]] == ["user", "assistant", "assistant"]
    assert snapshot["messages"][1]["tool_calls"][0]["content"] == "437"
    assert snapshot["run"]["status"] == "completed"


async def test_a_second_tab_sees_the_same_live_events(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.01
    first = await connect(owner)
    await first.ask("what is 6*7?")
    created = await first.receive()
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=created["thread"], after_seq=None)
    snapshot = await second.receive()
    first_events = [e for e in await first.run_to_end() if e["seq"] > snapshot["seq"]]
    # Events sent between joining and the snapshot arrive after it; a client drops what the snapshot holds.
    second_events = [e for e in await second.run_to_end() if e["seq"] > snapshot["seq"]]
    assert second_events == first_events


async def test_another_users_thread_and_a_random_id_get_the_same_answer(connect, owner, stranger):
    client = await connect(owner)
    await client.ask("hello")
    thread_id = (await client.run_to_end())[0]["thread"]

    intruder = await connect(stranger)
    await intruder.send(type="thread.subscribe", thread=thread_id, after_seq=None)
    foreign = await intruder.receive()
    await intruder.send(type="thread.subscribe", thread=str(uuid.uuid4()), after_seq=None)
    random = await intruder.receive()
    assert (
        (foreign["code"], foreign["message"]) == (random["code"], random["message"]) == ("not_found", "No such thread.")
    )


async def test_a_stranger_cannot_post_into_someone_elses_thread(connect, owner, stranger):
    client = await connect(owner)
    await client.ask("hello")
    thread_id = (await client.run_to_end())[0]["thread"]
    intruder = await connect(stranger)
    await intruder.ask("mine now", thread=thread_id)
    assert (await intruder.receive())["code"] == "not_found"
    assert await Message.objects.filter(content="mine now").acount() == 0


async def test_a_second_message_while_a_run_is_active_is_refused(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.02
    client = await connect(owner)
    await client.ask("hello")
    thread_id = (await client.receive())["thread"]
    await client.ask("are you there?", thread=thread_id, ref="second")
    refused = await client.until("error")
    assert (refused[-1]["code"], refused[-1]["ref"]) == ("run_active", "second")
    await client.run_to_end()
    assert await Message.objects.filter(role="user").acount() == 1


async def test_a_replayed_send_stores_the_message_once(connect, owner):
    client = await connect(owner)
    client_msg_id = await client.ask("hello")
    thread_id = (await client.run_to_end())[0]["thread"]
    await client.ask("hello", thread=thread_id, client_msg_id=client_msg_id)
    snapshot = await client.until("thread.snapshot")
    assert [m["role"] for m in snapshot[-1]["messages"]] == ["user", "assistant"]
    assert await Run.objects.acount() == 1


async def test_a_replayed_first_send_does_not_create_a_second_thread(connect, owner):
    client = await connect(owner)
    client_msg_id = await client.ask("hello")
    await client.run_to_end()
    await client.ask("hello", client_msg_id=client_msg_id)
    await client.until("thread.snapshot")
    assert await Thread.objects.acount() == 1


async def test_stop_keeps_the_partial_answer_marked_cancelled(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.05
    client = await connect(owner)
    await client.ask("hello")
    events = await client.until("message.delta")
    await client.send(type="run.cancel", thread=events[0]["thread"])
    events += await client.run_to_end()
    completed = [e for e in events if e["type"] == "message.completed"][-1]
    assert completed["status"] == "cancelled"
    assert completed["content"] == "".join(e["text"] for e in events if e["type"] == "message.delta")
    assert events[-1]["type"] == "run.cancelled"
    message = await Message.objects.aget(role="assistant")
    assert (message.status, message.content) == ("cancelled", completed["content"])


async def test_the_thread_goes_on_after_a_stop(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.05
    client = await connect(owner)
    await client.ask("hello")
    thread_id = (await client.until("message.delta"))[0]["thread"]
    await client.send(type="run.cancel", thread=thread_id)
    await client.run_to_end()
    settings.AGENTWEB_DEMO_DELAY = 0
    await client.ask("what is 1+1?", thread=thread_id)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"


async def test_stop_without_a_running_answer_is_an_error(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    thread_id = (await client.run_to_end())[0]["thread"]
    await client.send(type="run.cancel", thread=thread_id)
    assert (await client.receive())["code"] == "no_active_run"


async def test_the_step_limit_ends_the_run_with_its_reason(connect, owner, settings):
    settings.AGENTWEB_MAX_STEPS = 1
    client = await connect(owner)
    await client.ask("what is 23*19?")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert events[-1]["reason"] == "max_steps"
    # The tool calls of the last step still ran, so the history stays whole.
    assert [e["status"] for e in events if e["type"] == "tool_call.completed"] == ["success"]


async def test_a_decision_on_an_unknown_tool_call_is_not_found(connect, owner):
    client = await connect(owner)
    await client.send(type="tool_call.decide", tool_call=str(uuid.uuid4()), decision="approve")
    assert (await client.receive())["code"] == "not_found"


async def test_an_event_is_sent_as_one_json_object_per_frame(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    raw = await client.communicator.receive_from(timeout=5)
    assert json.loads(raw)["type"] == "thread.created"
