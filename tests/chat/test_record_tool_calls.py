"""chat.store.record_tool_calls: the rows of a step's calls as the run holds them (chat/recorder.py)."""

import uuid

import pytest
from django.utils import timezone

from chat import store
from chat.models import Message, Run, Thread, ToolCall

pytestmark = pytest.mark.django_db


def test_calls_written_early_are_updated_and_answered_later(django_user_model):
    owner = django_user_model.objects.create_user("recorder", password="x")
    thread = Thread.objects.create(owner=owner)
    run = Run.objects.create(thread=thread)
    message = Message.objects.create(thread=thread, run=run, order=1, role="assistant", status="streaming")
    ids = [uuid.uuid4(), uuid.uuid4()]
    # A snapshot while the calls stream: written as they are.
    store.record_tool_calls(
        message_id=message.pk,
        thread_id=thread.pk,
        run_id=run.pk,
        new=[ToolCall(id=ids[i], index=i, call_id=f"c{i}", name="calculator", status="streaming") for i in range(2)],
        changed=[],
        answers=[],
    )
    assert list(ToolCall.objects.order_by("index").values_list("status", flat=True)) == ["streaming", "streaming"]
    now = timezone.now()
    finished = ToolCall(
        id=ids[0],
        index=0,
        call_id="c0",
        name="calculator",
        args={"expression": "1+1"},
        status="success",
        started_at=now,
        finished_at=now,
        duration_ms=3,
        result="2",
    )
    store.record_tool_calls(
        message_id=message.pk,
        thread_id=thread.pk,
        run_id=run.pk,
        new=[],
        changed=[
            finished,
            ToolCall(
                id=ids[1],
                index=1,
                call_id="c1",
                name="calculator",
                args={"expression": "x"},
                status="awaiting_approval",
                approval={"approve": True},
            ),
        ],
        answers=[(finished, "2", None)],
        after=1,
    )
    first, second = ToolCall.objects.order_by("index")
    assert (first.status, first.args, first.result, first.duration_ms) == ("success", {"expression": "1+1"}, "2", 3)
    assert (second.status, second.args, second.approval) == (
        "awaiting_approval",
        {"expression": "x"},
        {"approve": True},
    )
    answer = Message.objects.get(role="tool")
    assert (answer.order, answer.tool_call_id, answer.content, answer.status) == (2, "c0", "2", "complete")
    history = store.load_history(thread_id=thread.pk, system_prompt="")
    assert [m.role for m in history] == ["assistant", "tool"]  # the waiting call gets its result on resume


def test_answers_go_right_after_the_thread_s_last_message_in_the_order_given(django_user_model):
    """One writer of tool messages (store.add_tool_results), for the run's results and a person's decisions alike;
    the last message's order is read when the caller does not know it."""
    owner = django_user_model.objects.create_user("answers", password="x")
    thread = Thread.objects.create(owner=owner)
    run = Run.objects.create(thread=thread)
    message = Message.objects.create(thread=thread, run=run, order=3, role="assistant")
    rejected = ToolCall(message=message, call_id="c0", name="calculator", status="rejected")
    replied = ToolCall(message=message, call_id="c1", name="calculator", status="replied")

    store.add_tool_results(
        thread_id=thread.pk, run_id=run.pk, answers=[(rejected, "declined", None), (replied, "it is 4", {"n": 4})]
    )

    answers = Message.objects.filter(role="tool").order_by("order")
    assert [(m.order, m.tool_call_id, m.content, m.status, m.artifact) for m in answers] == [
        (4, "c0", "declined", "error", None),
        (5, "c1", "it is 4", "complete", {"n": 4}),
    ]
