"""The heartbeat of the runs streaming in this process: one statement every AGENTWEB_HEARTBEAT_SECONDS for all of them.

A run's heartbeat says its process is alive; once it is older than AGENTWEB_RUN_STALE_SECONDS the run is taken for
dead and interrupted (chat/store/run_claims.py). Each run used to beat on its own, an UPDATE every 10 s from a task of
its own: 200 runs, 20 statements a second through the worker's one database thread, and after a burst of turns
all of them within the same few seconds, the streams around them delayed (docs/performance.md, P32). What a beat
says is the same for every run of a process, so one beat says it for all of them.
"""

from __future__ import annotations

import asyncio
import logging

from channels.db import database_sync_to_async
from django.apps import apps
from django.conf import settings

from .. import store

log = logging.getLogger("agentweb.runs")


def beat_while_running(run_id: int) -> None:
    """`run_id` is beaten for from now until stop_beating."""
    apps.get_app_config("chat").heartbeat.add(run_id)


def stop_beating(run_id: int) -> None:
    """The run ended or paused (a paused run has no heartbeat). The last run of the loop stops the task."""
    apps.get_app_config("chat").heartbeat.discard(run_id)


async def beat_every_interval(runs: dict[int, None]) -> None:
    """The task of a loop's running runs (chat/per_loop.py; made by chat/apps.py)."""
    while True:
        await asyncio.sleep(settings.AGENTWEB_HEARTBEAT_SECONDS)
        try:
            await database_sync_to_async(store.heartbeat)(run_ids=list(runs))
        except Exception:  # the database out of reach for a moment: the next beat tries again
            log.exception("the heartbeat of %d runs could not be written", len(runs))
