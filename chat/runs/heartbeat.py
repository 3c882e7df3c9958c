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
from django.conf import settings

from .. import store

log = logging.getLogger("agentweb.runs")

# The runs beating in each event loop (one per process; tests make one per test), and the task beating for them.
_beating: dict[asyncio.AbstractEventLoop, tuple[set[int], asyncio.Task]] = {}


def beat_while_running(run_id: int) -> None:
    """`run_id` is beaten for from now until stop_beating."""
    loop = asyncio.get_running_loop()
    found = _beating.get(loop)
    if found is None or found[1].done():  # none yet, or its task was cancelled: the runs it beat for go on
        runs: set[int] = found[0] if found is not None else set()
        _beating[loop] = found = (runs, loop.create_task(_beat(runs), name="runs-heartbeat"))
    found[0].add(run_id)


def stop_beating(run_id: int) -> None:
    """The run ended or paused (a paused run has no heartbeat). The last run of the loop stops the task."""
    found = _beating.get(asyncio.get_running_loop())
    if found is None:
        return
    runs, task = found
    runs.discard(run_id)
    if not runs:
        task.cancel()
        del _beating[asyncio.get_running_loop()]


async def _beat(runs: set[int]) -> None:
    while True:
        await asyncio.sleep(settings.AGENTWEB_HEARTBEAT_SECONDS)
        try:
            await database_sync_to_async(store.heartbeat)(run_ids=list(runs))
        except Exception:  # the database out of reach for a moment: the next beat tries again
            log.exception("the heartbeat of %d runs could not be written", len(runs))
