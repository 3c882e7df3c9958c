"""Which process runs a thread's run, with several processes (chat/store/owners.py). The thread's event numbers are
the log's (tests/chat/live/test_log.py)."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from chat import store
from chat.models import Run
from chat.store import owners

pytestmark = pytest.mark.django_db


@pytest.fixture
def turn():
    user = User.objects.create_user("ada")
    return store.start_turn(user=user, thread_id=None, content="hello", client_msg_id=uuid.uuid4(), step_limit=5)


def test_a_process_takes_a_run_no_one_has_taken(turn):
    assert owners.take(run_id=turn.run.pk, owner="specific.a!1")
    assert Run.objects.get(pk=turn.run.pk).owner == "specific.a!1"


def test_a_second_process_cannot_take_the_same_run(turn):
    owners.take(run_id=turn.run.pk, owner="specific.a!1")

    assert not owners.take(run_id=turn.run.pk, owner="specific.b!2")
    assert Run.objects.get(pk=turn.run.pk).owner == "specific.a!1"


def test_a_live_run_names_its_process(turn):
    owners.take(run_id=turn.run.pk, owner="specific.a!1")

    live = owners.live_run(thread_id=turn.thread.pk, stale_before=timezone.now() - timedelta(seconds=45))

    assert live == owners.LiveRun(turn.run.pk, "specific.a!1")


def test_a_run_whose_process_went_silent_becomes_interrupted_when_looked_at(turn):
    owners.take(run_id=turn.run.pk, owner="specific.a!1")
    Run.objects.filter(pk=turn.run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))

    live = owners.live_run(thread_id=turn.thread.pk, stale_before=timezone.now() - timedelta(seconds=45))

    assert live is None
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.INTERRUPTED


def test_a_run_no_worker_took_yet_can_be_cancelled_and_then_no_worker_takes_it(turn):
    assert owners.cancel_untaken(run_id=turn.run.pk)

    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.CANCELLED
    assert not owners.take(run_id=turn.run.pk, owner="specific.a!1")


def test_a_taken_run_is_not_cancelled_as_untaken(turn):
    owners.take(run_id=turn.run.pk, owner="specific.a!1")

    assert not owners.cancel_untaken(run_id=turn.run.pk)
    assert Run.objects.get(pk=turn.run.pk).status == Run.Status.RUNNING


def test_resuming_a_waiting_run_leaves_it_for_any_process_to_take(turn):
    owners.take(run_id=turn.run.pk, owner="specific.a!1")
    Run.objects.filter(pk=turn.run.pk).update(status=Run.Status.WAITING)

    assert store.claim_waiting_run(run_id=turn.run.pk)
    assert owners.take(run_id=turn.run.pk, owner="specific.b!2")
