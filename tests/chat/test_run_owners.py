"""Which process runs a thread's run, and the thread's event numbers, with several processes (chat/run_owners.py)."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from chat import run_owners, services
from chat.models import Run, Thread

pytestmark = pytest.mark.django_db


@pytest.fixture
def turn():
    user = User.objects.create_user("ada")
    return services.start_turn(user=user, thread_id=None, content="hello", client_msg_id=uuid.uuid4(), step_limit=5)


def test_a_process_takes_a_run_no_one_has_taken_and_goes_on_from_the_threads_last_number(turn):
    Thread.objects.filter(pk=turn.thread.pk).update(last_seq=7)

    assert run_owners.take(run_id=turn.run.pk, owner="specific.a!1") == 7
    assert Run.objects.get(pk=turn.run.pk).owner == "specific.a!1"


def test_a_second_process_cannot_take_the_same_run(turn):
    run_owners.take(run_id=turn.run.pk, owner="specific.a!1")

    assert run_owners.take(run_id=turn.run.pk, owner="specific.b!2") is None
    assert Run.objects.get(pk=turn.run.pk).owner == "specific.a!1"


def test_a_live_run_names_its_process(turn):
    run_owners.take(run_id=turn.run.pk, owner="specific.a!1")

    live = run_owners.live_run(thread_id=turn.thread.pk, stale_before=timezone.now() - timedelta(seconds=45))

    assert live == run_owners.LiveRun(turn.run.pk, "specific.a!1")


def test_a_run_whose_process_went_silent_becomes_interrupted_when_looked_at(turn):
    run_owners.take(run_id=turn.run.pk, owner="specific.a!1")
    Run.objects.filter(pk=turn.run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))

    live = run_owners.live_run(thread_id=turn.thread.pk, stale_before=timezone.now() - timedelta(seconds=45))

    assert live is None
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.INTERRUPTED


def test_a_run_no_worker_took_yet_can_be_cancelled_and_then_no_worker_takes_it(turn):
    assert run_owners.cancel_untaken(run_id=turn.run.pk)

    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.CANCELLED
    assert run_owners.take(run_id=turn.run.pk, owner="specific.a!1") is None


def test_a_taken_run_is_not_cancelled_as_untaken(turn):
    run_owners.take(run_id=turn.run.pk, owner="specific.a!1")

    assert not run_owners.cancel_untaken(run_id=turn.run.pk)
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.RUNNING


def test_reserved_numbers_never_overlap(turn):
    Thread.objects.filter(pk=turn.thread.pk).update(last_seq=3)

    first = run_owners.reserve_seqs(thread_id=turn.thread.pk, count=2)
    second = run_owners.reserve_seqs(thread_id=turn.thread.pk, count=1)

    assert (first, second) == (4, 6)
    assert services.current_seq(thread_id=turn.thread.pk) == 6


def test_resuming_a_waiting_run_leaves_it_for_any_process_to_take(turn):
    run_owners.take(run_id=turn.run.pk, owner="specific.a!1")
    Run.objects.filter(pk=turn.run.pk).update(status=Run.Status.WAITING)

    assert services.claim_waiting_run(run_id=turn.run.pk)
    assert run_owners.take(run_id=turn.run.pk, owner="specific.b!2") is not None


def test_numbers_wanted_while_another_process_runs_the_thread_go_to_that_process(turn):
    run_owners.take(run_id=turn.run.pk, owner="specific.a!1")
    before = Thread.objects.get(pk=turn.thread.pk).last_seq

    first, owner = run_owners.reserve_seqs_unless_owned(
        thread_id=turn.thread.pk, count=2, stale_before=timezone.now() - timedelta(seconds=45), own_address="b!2"
    )

    assert (first, owner) == (None, "specific.a!1")
    assert Thread.objects.get(pk=turn.thread.pk).last_seq == before  # nothing reserved behind its back


def test_a_run_taken_after_numbers_were_reserved_goes_on_after_them(turn):
    Thread.objects.filter(pk=turn.thread.pk).update(last_seq=7)

    first, owner = run_owners.reserve_seqs_unless_owned(
        thread_id=turn.thread.pk, count=2, stale_before=timezone.now() - timedelta(seconds=45), own_address=None
    )

    assert (first, owner) == (8, None)
    assert run_owners.take(run_id=turn.run.pk, owner="specific.a!1") == 9


def test_a_dead_processs_run_leaves_its_numbers_skipped(turn):
    """Its events were numbered in memory; a tab that saw them must take the next ones as new, not as repeats."""
    run_owners.take(run_id=turn.run.pk, owner="specific.a!1")
    Thread.objects.filter(pk=turn.thread.pk).update(last_seq=7)
    Run.objects.filter(pk=turn.run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))

    first, owner = run_owners.reserve_seqs_unless_owned(
        thread_id=turn.thread.pk, count=1, stale_before=timezone.now() - timedelta(seconds=45), own_address=None
    )

    assert owner is None
    assert first > 7 + services.STALE_SEQ_GAP - 1
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.INTERRUPTED
