"""The heartbeat of a process's running runs (chat/runs/heartbeat.py): one statement for all of them, every
AGENTWEB_HEARTBEAT_SECONDS, for as long as each runs."""

import asyncio
import uuid

import pytest
from channels.db import database_sync_to_async

from chat import store
from chat.models import Run
from chat.runs.heartbeat import beat_while_running, stop_beating

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def running_runs(owner, count: int) -> list[int]:
    turns = [
        store.start_turn(user=owner, thread_id=None, content="hi", client_msg_id=uuid.uuid4(), step_limit=5)
        for _ in range(count)
    ]
    Run.objects.filter(pk__in=[t.run.pk for t in turns]).update(heartbeat_at=None)
    return [t.run.pk for t in turns]


@database_sync_to_async
def heartbeats(run_ids: list[int]) -> list:
    return [Run.objects.get(pk=pk).heartbeat_at for pk in run_ids]


async def beaten(run_ids: list[int]) -> list:
    for _ in range(200):
        beats = await heartbeats(run_ids)
        if all(beats):
            return beats
        await asyncio.sleep(0.02)
    return beats


async def test_the_running_runs_of_a_process_are_beaten_for_in_one_statement(owner, settings):
    settings.AGENTWEB_HEARTBEAT_SECONDS = 0.05
    runs = await running_runs(owner, 3)
    for run in runs:
        beat_while_running(run)
    try:
        beats = await beaten(runs)
    finally:
        for run in runs:
            stop_beating(run)

    assert all(beats) and len(set(beats)) == 1  # one statement's time for all three


async def test_a_run_that_ended_is_no_longer_beaten_for(owner, settings):
    settings.AGENTWEB_HEARTBEAT_SECONDS = 0.05
    ended, running = await running_runs(owner, 2)
    beat_while_running(ended)
    beat_while_running(running)
    stop_beating(ended)
    try:
        assert (await beaten([running]))[0] is not None
    finally:
        stop_beating(running)

    assert (await heartbeats([ended])) == [None]


async def test_a_waiting_run_has_no_heartbeat(owner, settings):
    """A paused run waits for a person, not for a process: it is never taken for dead."""
    settings.AGENTWEB_HEARTBEAT_SECONDS = 0.05
    waiting, running = await running_runs(owner, 2)
    await database_sync_to_async(Run.objects.filter(pk=waiting).update)(status=Run.Status.WAITING)
    beat_while_running(waiting)
    beat_while_running(running)
    try:
        await beaten([running])
    finally:
        stop_beating(waiting)
        stop_beating(running)

    assert (await heartbeats([waiting])) == [None]
