"""Which process runs a thread's run, with several processes (chat/store/run_claims.py). The thread's event numbers are
the log's (tests/delivery/test_log.py)."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from chat import store
from chat.models import Message, Run
from chat.store import run_claims

pytestmark = pytest.mark.django_db


@pytest.fixture
def turn():
    user = User.objects.create_user("ada")
    return store.start_turn(user=user, thread_id=None, content="hello", client_msg_id=uuid.uuid4(), step_limit=5)


def test_a_process_takes_a_run_no_one_has_taken(turn):
    assert run_claims.take(run_id=turn.run.pk, owner="specific.a!1")
    assert Run.objects.get(pk=turn.run.pk).owner == "specific.a!1"


def test_a_second_process_cannot_take_the_same_run(turn):
    run_claims.take(run_id=turn.run.pk, owner="specific.a!1")

    assert not run_claims.take(run_id=turn.run.pk, owner="specific.b!2")
    assert Run.objects.get(pk=turn.run.pk).owner == "specific.a!1"


def test_a_live_run_names_its_process(turn):
    run_claims.take(run_id=turn.run.pk, owner="specific.a!1")

    live = run_claims.live_run(thread_id=turn.thread.pk, stale_before=timezone.now() - timedelta(seconds=45))

    assert live == run_claims.LiveRun(turn.run.pk, "specific.a!1")


def test_a_run_whose_process_went_silent_becomes_interrupted_when_looked_at(turn):
    run_claims.take(run_id=turn.run.pk, owner="specific.a!1")
    Run.objects.filter(pk=turn.run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))

    live = run_claims.live_run(thread_id=turn.thread.pk, stale_before=timezone.now() - timedelta(seconds=45))

    assert live is None
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.INTERRUPTED


def test_a_run_no_worker_took_yet_can_be_cancelled_and_then_no_worker_takes_it(turn):
    assert store.cancel_waiting_run(thread_id=turn.thread.pk, running_too=True) == (turn.run.pk, [])

    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.CANCELLED
    assert not run_claims.take(run_id=turn.run.pk, owner="specific.a!1")


def test_a_taken_run_is_not_cancelled_as_untaken(turn):
    run_claims.take(run_id=turn.run.pk, owner="specific.a!1")

    assert store.cancel_waiting_run(thread_id=turn.thread.pk, running_too=True) is None
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.RUNNING


def test_resuming_a_waiting_run_leaves_it_for_any_process_to_take(turn):
    run_claims.take(run_id=turn.run.pk, owner="specific.a!1")
    Run.objects.filter(pk=turn.run.pk).update(status=Run.Status.WAITING)

    assert store.claim_waiting_run(run_id=turn.run.pk)
    assert run_claims.take(run_id=turn.run.pk, owner="specific.b!2")


def dead(turn) -> int:
    """The turn's run, taken by a process that then died (no heartbeat for five minutes), with an answer streaming
    whose text it last wrote as "Hello"."""
    run_claims.take(run_id=turn.run.pk, owner="specific.a!1")
    Run.objects.filter(pk=turn.run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    message = store.create_assistant_message(thread_id=turn.thread.pk, run_id=turn.run.pk)
    Message.objects.filter(pk=message).update(content="Hello")
    return message


def test_a_dead_run_is_found_dead_without_being_changed(turn):
    dead(turn)

    found = run_claims.running_run(thread_id=turn.thread.pk, stale_before=timezone.now() - timedelta(seconds=45))

    assert found == run_claims.LiveRun(turn.run.pk, "specific.a!1", alive=False)
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.RUNNING


def test_a_dead_runs_answer_keeps_the_text_its_tabs_were_shown(turn):
    message = dead(turn)

    closed = run_claims.interrupt_dead_run(
        run_id=turn.run.pk,
        stale_before=timezone.now() - timedelta(seconds=45),
        texts={message: "Hello, world, as far as it streamed"},
    )

    assert closed == [(message, "Hello, world, as far as it streamed")]
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.INTERRUPTED
    stored = Message.objects.get(pk=message)
    assert (stored.content, stored.status) == ("Hello, world, as far as it streamed", Message.Status.ERROR)


def test_a_streamed_text_that_does_not_go_on_from_the_stored_one_is_not_taken(turn):
    message = dead(turn)

    run_claims.interrupt_dead_run(
        run_id=turn.run.pk, stale_before=timezone.now() - timedelta(seconds=45), texts={message: "Goodbye"}
    )

    assert Message.objects.get(pk=message).content == "Hello"


def test_a_dead_run_another_process_interrupted_first_is_left_as_it_is(turn):
    message = dead(turn)
    stale_before = timezone.now() - timedelta(seconds=45)
    run_claims.interrupt_dead_run(run_id=turn.run.pk, stale_before=stale_before, texts={})

    again = run_claims.interrupt_dead_run(run_id=turn.run.pk, stale_before=stale_before, texts={message: "Hello again"})

    assert again is None
    assert Message.objects.get(pk=message).content == "Hello"
