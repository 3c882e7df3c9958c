"""Versions: a regenerate or an edit keeps the earlier branch, message.switch_version shows another, and the model,
other tabs, reconnects, exports, shares and a thread's delete all agree on what is kept and what is shown."""

import json
import uuid

import pytest
from channels.db import database_sync_to_async
from django.test import Client as DjangoClient
from django.urls import reverse

from chat.models import Message, Run, Thread, ToolCall
from sharing.services import create_link
from tests.support.model_server import SSEResponse, openai_sse_body

pytestmark = pytest.mark.django_db(transaction=True)


def answer(text):
    return SSEResponse(openai_sse_body(text=text))


def history(request):
    return [(m["role"], m["content"]) for m in request["json"]["messages"] if m["role"] != "system"]


async def shown(client, thread):
    """What a tab that loads the thread now sees: (role, content, versions) of each message."""
    await client.send(type="thread.subscribe", thread=thread, after_seq=None)
    snapshot = await client.until("thread.snapshot")
    return [(m["role"], m["content"], m.get("versions")) for m in snapshot[-1]["messages"]]


async def two_turns(client, model_server):
    model_server.enqueue(answer("first answer"), answer("second answer"))
    await client.ask("first question")
    thread = (await client.run_to_end())[0]["thread"]
    await client.ask("second question", thread=thread)
    await client.run_to_end()
    return thread


async def regenerated(client, model_server, thread, text="second answer, again"):
    """Regenerate the last answer; returns the thread.branch_changed event."""
    model_server.enqueue(answer(text))
    await client.send(type="run.regenerate", thread=thread)
    events = await client.run_to_end()
    return next(e for e in events if e["type"] == "thread.branch_changed")


async def test_regenerate_keeps_the_old_answer_as_version_1_of_2(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    changed = await regenerated(client, model_server, thread)
    old = await Message.all_versions.aget(content="second answer")
    assert changed["removed"] == [old.pk]
    [new] = changed["messages"]
    assert new["role"] == "assistant" and new["versions"]["index"] == 2 and new["versions"]["count"] == 2
    assert new["versions"]["ids"] == [old.pk, new["id"]]
    last = (await shown(client, thread))[-1]
    assert last[:2] == ("assistant", "second answer, again")
    assert last[2] == {"index": 2, "count": 2, "ids": [old.pk, new["id"]]}


async def test_switching_back_shows_the_old_answer_and_the_model_sees_only_that_branch(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    changed = await regenerated(client, model_server, thread)
    new_id, (old_id, _) = changed["messages"][0]["id"], changed["messages"][0]["versions"]["ids"]
    await client.send(type="message.switch_version", thread=thread, message=new_id, to=old_id)
    switched = (await client.until("thread.branch_changed"))[-1]
    assert switched["removed"] == [new_id]
    assert [(m["content"], m["versions"]["index"]) for m in switched["messages"]] == [("second answer", 1)]
    assert [content for _, content, _ in await shown(client, thread)][-1] == "second answer"

    model_server.enqueue(answer("third answer"))
    await client.ask("third question", thread=thread)
    await client.run_to_end()
    assert history(model_server.requests[-1]) == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
        ("assistant", "second answer"),
        ("user", "third question"),
    ]


async def test_editing_an_earlier_message_forks_from_there_and_keeps_what_came_after(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    first = await Message.objects.aget(content="first question")
    model_server.enqueue(answer("answer to the edit"))
    await client.send(
        type="message.edit", thread=thread, message=first.pk, content="first, edited", client_msg_id=str(uuid.uuid4())
    )
    events = await client.run_to_end()
    changed = next(e for e in events if e["type"] == "thread.branch_changed")
    assert len(changed["removed"]) == 4  # both turns leave the view
    assert [(m["content"], m["versions"]["index"]) for m in changed["messages"]] == [("first, edited", 2)]
    assert history(model_server.requests[-1]) == [("user", "first, edited")]
    assert [content for _, content, _ in await shown(client, thread)] == ["first, edited", "answer to the edit"]
    # Kept: switching back to the first version shows both turns as they were.
    await client.send(type="message.switch_version", thread=thread, message=changed["messages"][0]["id"], to=first.pk)
    switched = (await client.until("thread.branch_changed"))[-1]
    assert [m["content"] for m in switched["messages"]] == [
        "first question",
        "first answer",
        "second question",
        "second answer",
    ]


async def test_switching_while_a_run_is_active_is_refused(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    changed = await regenerated(client, model_server, thread)
    new_id, (old_id, _) = changed["messages"][0]["id"], changed["messages"][0]["versions"]["ids"]
    body = openai_sse_body(text="a slow answer")
    pieces = [(event + "\n\n").encode() for event in body.split("\n\n") if event]
    model_server.enqueue(SSEResponse(body, pieces=pieces, delay=0.3))
    await client.ask("third question", thread=thread)
    await client.until("run.started")
    await client.send(type="message.switch_version", thread=thread, message=new_id, to=old_id, ref="sw")
    error = (await client.until("error"))[-1]
    assert (error["code"], error["ref"]) == ("run_active", "sw")
    await client.run_to_end()
    assert await Message.objects.filter(pk=new_id).aexists()


async def test_another_tab_receives_the_switch(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    changed = await regenerated(client, model_server, thread)
    other = await connect(owner)
    await shown(other, thread)
    new_id, (old_id, _) = changed["messages"][0]["id"], changed["messages"][0]["versions"]["ids"]
    await client.send(type="message.switch_version", thread=thread, message=new_id, to=old_id)
    told = (await other.until("thread.branch_changed"))[-1]
    assert told["removed"] == [new_id] and told["messages"][0]["id"] == old_id


async def test_a_reconnect_with_after_seq_gets_the_switch(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    changed = await regenerated(client, model_server, thread)
    await client.send(type="thread.subscribe", thread=thread, after_seq=None)
    seq = (await client.until("thread.snapshot"))[-1]["seq"]
    new_id, (old_id, _) = changed["messages"][0]["id"], changed["messages"][0]["versions"]["ids"]
    await client.send(type="message.switch_version", thread=thread, message=new_id, to=old_id)
    await client.until("thread.branch_changed")
    returning = await connect(owner)
    await returning.send(type="thread.subscribe", thread=thread, after_seq=seq)
    event = await returning.receive()
    assert (event["type"], event["seq"], event["messages"][0]["id"]) == ("thread.branch_changed", seq + 1, old_id)


async def test_switching_to_a_message_that_is_not_a_version_is_not_found(connect, owner, model_server):
    client = await connect(owner)
    thread = await two_turns(client, model_server)
    changed = await regenerated(client, model_server, thread)
    first = await Message.objects.aget(content="first question")
    await client.send(
        type="message.switch_version", thread=thread, message=changed["messages"][0]["id"], to=first.pk, ref="x"
    )
    error = (await client.until("error"))[-1]
    assert (error["code"], error["ref"]) == ("not_found", "x")


async def test_export_and_share_show_the_branch_shown(connect, owner, model_server):
    client = await connect(owner)
    thread_id = await two_turns(client, model_server)
    await regenerated(client, model_server, thread_id, text="the regenerated answer")

    @database_sync_to_async
    def exported_and_shared():
        thread = Thread.objects.get(pk=thread_id)
        http = DjangoClient()
        http.force_login(owner)
        exported = json.loads(http.get(reverse("sharing:export_json", args=[thread.pk])).getvalue())
        page = DjangoClient().get(reverse("sharing:shared", args=[create_link(thread=thread).token])).content.decode()
        return [m["content"] for m in exported["messages"]], page

    contents, page = await exported_and_shared()
    assert contents == ["first question", "first answer", "second question", "the regenerated answer"]
    assert "the regenerated answer" in page and "second answer" not in page


async def test_deleting_a_thread_deletes_every_version(connect, owner, model_server):
    client = await connect(owner)
    thread_id = await two_turns(client, model_server)
    await regenerated(client, model_server, thread_id)
    assert await Message.all_versions.filter(thread_id=thread_id, active=False).aexists()

    @database_sync_to_async
    def delete():
        http = DjangoClient()
        http.force_login(owner)
        return http.post(reverse("chat:thread_delete", args=[thread_id])).status_code

    assert await delete() == 200
    assert not await Message.all_versions.filter(thread_id=thread_id).aexists()
    assert not await ToolCall.objects.filter(message__thread_id=thread_id).aexists()
    assert not await Run.objects.filter(thread_id=thread_id).aexists()


def test_a_summary_holds_only_for_the_branch_it_was_made_on(owner):
    """Editing a message the summary covers leaves the new branch without it; switching back brings it back."""
    from chat.store import versions
    from chat.summaries import save_summary

    thread = Thread.objects.create(owner=owner, title="t")
    previous = None
    for order, (role, content) in enumerate([("user", "q1"), ("assistant", "a1"), ("user", "q2")], 1):
        previous = Message.objects.create(thread=thread, order=order, role=role, content=content, parent=previous)
    first = Message.objects.get(content="q1")
    save_summary(
        thread_id=thread.pk, run_id=None, text="they asked q1", through=2, model_label="", usage={}, usage_rows=[]
    )
    changed = versions.edit(
        user=owner, thread_id=thread.pk, message_id=first.pk, content="q1, edited", client_msg_id=uuid.uuid4()
    )
    Run.objects.filter(pk=changed.turn.run.pk).update(status=Run.Status.COMPLETED)
    thread.refresh_from_db()
    assert (thread.summary, thread.summary_through, changed.summary) == ("", None, None)
    back = versions.switch(user=owner, thread_id=thread.pk, message_id=changed.message, to=first.pk)
    thread.refresh_from_db()
    assert (thread.summary, thread.summary_through) == ("they asked q1", 2)
    assert back.summary == {"text": "they asked q1", "before": Message.objects.get(content="q2").pk}
