"""run.regenerate and message.edit_last: the thread goes back to its last user message and a new run answers it."""

import uuid

import pytest
from channels.db import database_sync_to_async

from chat.models import Message, Run, Thread
from tests.support.model_server import SSEResponse, openai_sse_body

pytestmark = pytest.mark.django_db(transaction=True)


def answer(text):
    return SSEResponse(openai_sse_body(text=text))


def history(request):
    return [(m["role"], m["content"]) for m in request["json"]["messages"] if m["role"] != "system"]


@database_sync_to_async
def stored(thread_id):
    return list(Message.objects.filter(thread_id=thread_id).order_by("order").values_list("role", "content"))


async def two_turns(client, model_server):
    model_server.enqueue(answer("first answer"), answer("second answer"))
    await client.ask("first question")
    events = await client.run_to_end()
    thread = events[0]["thread"]
    await client.ask("second question", thread=thread)
    await client.run_to_end()
    return thread


async def test_regenerate_answers_the_last_message_again_without_the_old_answer(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    model_server.enqueue(answer("second answer, again"))
    await client.send(type="run.regenerate", thread=thread)
    events = await client.run_to_end()
    assert events[0]["type"] == "thread.rewound"
    assert events[-1]["type"] == "run.completed"
    assert history(model_server.requests[-1]) == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]
    assert await stored(thread) == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
        ("assistant", "second answer, again"),
    ]
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


async def test_edit_last_replaces_the_message_and_drops_what_came_after(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    model_server.enqueue(answer("edited answer"))
    await client.send(
        type="message.edit_last", thread=thread, content="second question, edited", client_msg_id=str(uuid.uuid4())
    )
    events = await client.run_to_end()
    rewound = events[0]
    assert rewound["type"] == "thread.rewound"
    assert rewound["content"] == "second question, edited"
    assert len(rewound["removed"]) == 1
    assert history(model_server.requests[-1]) == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question, edited"),
    ]
    assert (await stored(thread))[2:] == [("user", "second question, edited"), ("assistant", "edited answer")]

    other_tab = await connect(owner)
    await other_tab.send(type="thread.subscribe", thread=thread, after_seq=None)
    snapshot = await other_tab.receive()
    assert [m["content"] for m in snapshot["messages"]][2:] == ["second question, edited", "edited answer"]


async def test_a_replayed_edit_changes_nothing_more(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    model_server.enqueue(answer("edited answer"))
    msg_id = str(uuid.uuid4())
    await client.send(type="message.edit_last", thread=thread, content="edited", client_msg_id=msg_id)
    await client.run_to_end()
    runs = await Run.objects.filter(thread_id=thread).acount()
    await client.send(type="message.edit_last", thread=thread, content="edited", client_msg_id=msg_id)
    assert (await client.receive())["type"] == "thread.snapshot"
    assert await Run.objects.filter(thread_id=thread).acount() == runs


@pytest.mark.parametrize("frame", ["run.regenerate", "message.edit_last"])
async def test_a_stranger_and_a_random_id_get_not_found_and_nothing_changes(connect, owner, stranger, frame):
    client = await connect(owner)
    await client.ask("what is 23*19?")
    thread = (await client.run_to_end())[0]["thread"]
    before = await stored(thread)
    intruder = await connect(stranger)
    for target in (thread, str(uuid.uuid4())):
        await intruder.send(type=frame, thread=target, content="mine now", client_msg_id=str(uuid.uuid4()), ref="x")
        error = await intruder.receive()
        assert (error["type"], error["code"], error["ref"]) == ("error", "not_found", "x")
    assert await stored(thread) == before
    assert await Run.objects.filter(thread_id=thread).acount() == 1


async def test_regenerate_while_a_run_is_active_is_refused(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.05
    client = await connect(owner)
    await client.ask("what is 23*19?")
    started = await client.until("run.started")
    thread = started[0]["thread"]
    await client.send(type="run.regenerate", thread=thread, ref="again")
    events = await client.until("error")
    assert events[-1]["code"] == "run_active"
    await client.run_to_end()
    assert await Run.objects.filter(thread_id=thread).acount() == 1


async def test_a_thread_without_a_user_message_cannot_be_regenerated(connect, owner):
    thread = await Thread.objects.acreate(owner=owner, title="empty")
    client = await connect(owner)
    await client.send(type="run.regenerate", thread=str(thread.pk))
    error = await client.receive()
    assert error["code"] == "not_allowed"
