"""The run layer's rules live on the models: which runs a retry or a continue may follow, which calls are still
open, and how a decision or a result closes a call."""

import pytest

from chat.models import Message, Run, Thread, ToolCall

pytestmark = pytest.mark.django_db


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner, title="t")


def waiting_call(thread) -> ToolCall:
    run = Run.objects.create(thread=thread, status=Run.Status.WAITING)
    message = Message.objects.create(thread=thread, run=run, order=1, role=Message.Role.ASSISTANT)
    return ToolCall.objects.create(
        message=message,
        call_id="c1",
        name="calculator",
        args={"expression": "1+1"},
        status=ToolCall.Status.AWAITING_APPROVAL,
        approval={"approve": True, "edit": True, "reject": True, "respond": True},
    )


@pytest.mark.parametrize("status", [Run.Status.FAILED, Run.Status.INTERRUPTED, Run.Status.CANCELLED])
def test_a_run_that_did_not_finish_may_be_retried(thread, status):
    assert Run(thread=thread, status=status).can_retry()


@pytest.mark.parametrize("status", [Run.Status.COMPLETED, Run.Status.RUNNING, Run.Status.WAITING])
def test_a_finished_or_active_run_may_not_be_retried(thread, status):
    assert not Run(thread=thread, status=status).can_retry()


def test_only_a_run_stopped_by_its_step_limit_may_be_continued(thread):
    assert Run(thread=thread, status=Run.Status.COMPLETED, reason="max_steps").can_continue()
    assert not Run(thread=thread, status=Run.Status.COMPLETED, reason="done").can_continue()
    assert not Run(thread=thread, status=Run.Status.FAILED, reason="max_steps").can_continue()


def test_a_run_is_active_while_it_runs_or_waits(thread):
    assert Run(thread=thread, status=Run.Status.RUNNING).is_active()
    assert Run(thread=thread, status=Run.Status.WAITING).is_active()
    assert not Run(thread=thread, status=Run.Status.CANCELLED).is_active()


def test_a_call_is_open_until_it_has_a_result():
    assert ToolCall.OPEN_STATUSES == (
        ToolCall.Status.STREAMING,
        ToolCall.Status.REQUESTED,
        ToolCall.Status.RUNNING,
        ToolCall.Status.AWAITING_APPROVAL,
    )


def test_an_approved_call_goes_back_to_requested(thread):
    call = waiting_call(thread)
    assert call.decide("approve")
    call.refresh_from_db()
    assert call.status == ToolCall.Status.REQUESTED


def test_an_edited_call_keeps_the_models_arguments(thread):
    call = waiting_call(thread)
    assert call.decide("edit", args={"expression": "2+2"})
    call.refresh_from_db()
    assert (call.args, call.original_args) == ({"expression": "2+2"}, {"expression": "1+1"})


def test_a_rejected_call_is_finished_with_the_reason_as_its_error(thread):
    call = waiting_call(thread)
    assert call.decide("reject", message="not now")
    call.refresh_from_db()
    assert call.status == ToolCall.Status.REJECTED and "not now" in call.error and call.finished_at


def test_a_call_answered_by_the_person_has_their_answer_as_its_result(thread):
    call = waiting_call(thread)
    assert call.decide("respond", message="it is 2")
    call.refresh_from_db()
    assert call.status == ToolCall.Status.REPLIED and "it is 2" in call.result and not call.error


def test_a_call_is_decided_once(thread):
    call = waiting_call(thread)
    stale = ToolCall.objects.get(pk=call.pk)  # a second decision read the call before the first was written
    assert call.decide("approve")
    assert not stale.decide("reject")
    call.refresh_from_db()
    assert call.status == ToolCall.Status.REQUESTED


def test_finishing_a_call_keeps_a_success_as_result_and_a_failure_as_error(thread):
    call = waiting_call(thread)
    call.finish(ToolCall.Status.SUCCESS, "2")
    assert (call.status, call.result, call.error) == (ToolCall.Status.SUCCESS, "2", "")
    assert call.finished_at is not None
    call.finish(ToolCall.Status.ERROR, "division by zero")
    assert (call.status, call.result, call.error) == (ToolCall.Status.ERROR, "", "division by zero")
