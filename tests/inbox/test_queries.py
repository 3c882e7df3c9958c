"""What waits for a person: their waiting calls and open requests for input, across all their threads whatever
started them, newest first — and nothing of anyone else's."""

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.models import Message, OpenInputRequest, Run, Source, Thread, ToolCall
from inbox import queries

pytestmark = pytest.mark.django_db

ALLOW = {"approve": True, "edit": True, "reject": True, "respond": True}


def waiting_call(owner, *, source=Source.CHAT, title="t", name="calculator", run_status=Run.Status.WAITING):
    thread = Thread.objects.create(owner=owner, title=title, source=source)
    run = Run.objects.create(thread=thread, status=run_status, source=source)
    message = Message.objects.create(thread=thread, run=run, order=1, role=Message.Role.ASSISTANT)
    return ToolCall.objects.create(
        message=message,
        call_id="c1",
        name=name,
        args={"expression": "1+1"},
        status=ToolCall.Status.AWAITING_APPROVAL,
        approval=ALLOW,
    )


def open_request(owner, *, run_status=Run.Status.RUNNING, title="asks"):
    thread = Thread.objects.create(owner=owner, title=title)
    run = Run.objects.create(thread=thread, status=run_status)
    message = Message.objects.create(thread=thread, run=run, order=1, role=Message.Role.ASSISTANT)
    call = ToolCall.objects.create(message=message, call_id="c1", name="ask_for_details", status="running")
    return OpenInputRequest.objects.create(
        id="r" * 32,
        thread=thread,
        run=run,
        tool_call=call.pk,
        tool_name="ask_for_details",
        message="Your name?",
        schema={"type": "object", "properties": {"name": {"type": "string"}}},
    )


def test_the_owner_sees_a_waiting_call_with_its_thread_tool_and_controls(owner):
    call = waiting_call(owner, title="Mail")
    [item] = queries.items(owner)
    assert item["kind"] == "approval"
    assert (item["tool_call"], item["tool"], item["args"], item["allow"]) == (
        str(call.pk),
        "calculator",
        {"expression": "1+1"},
        ALLOW,
    )
    assert item["thread"] == {
        "id": str(call.message.thread_id),
        "title": "Mail",
        "url": f"/t/{call.message.thread_id}/",
        "source": "chat",
    }
    assert queries.count(owner) == 1


def test_a_stranger_sees_nothing_of_anothers(owner, stranger):
    waiting_call(owner)
    open_request(owner)
    assert queries.items(stranger) == []
    assert queries.count(stranger) == 0
    assert queries.count(owner) == 2


@pytest.mark.parametrize("source", [Source.API, Source.SCHEDULE, Source.TRIGGER])
def test_calls_of_threads_started_without_the_chat_are_listed_with_their_origin(owner, source):
    waiting_call(owner, source=source)
    [item] = queries.items(owner)
    assert item["thread"]["source"] == source


def test_a_call_counts_only_while_it_and_its_run_wait(owner):
    decided = waiting_call(owner)
    ToolCall.objects.filter(pk=decided.pk).update(status=ToolCall.Status.REQUESTED)
    waiting_call(owner, run_status=Run.Status.CANCELLED)
    assert queries.items(owner) == []
    assert queries.count(owner) == 0


def test_an_open_request_is_listed_with_its_form_while_its_run_runs(owner):
    request = open_request(owner)
    [item] = queries.items(owner)
    assert item == {
        **item,
        "kind": "input",
        "request": request.pk,
        "tool_call": str(request.tool_call),
        "tool": "ask_for_details",
        "message": "Your name?",
        "schema": request.schema,
    }
    Run.objects.filter(pk=request.run_id).update(status=Run.Status.INTERRUPTED)  # its process died with it open
    assert queries.items(owner) == []
    assert queries.count(owner) == 0


def test_newest_first_across_kinds(owner):
    older = waiting_call(owner, title="older")
    ToolCall.objects.filter(pk=older.pk).update(created_at=timezone.now() - timedelta(hours=1))
    request = open_request(owner, title="middle")
    OpenInputRequest.objects.filter(pk=request.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    waiting_call(owner, title="newest")
    assert [i["thread"]["title"] for i in queries.items(owner)] == ["newest", "middle", "older"]


def test_a_deactivated_person_has_nothing_listed(owner):
    waiting_call(owner)
    owner.is_active = False
    owner.save()
    assert queries.count(owner) == 0
