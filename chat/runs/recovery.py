"""Which runs are orphans, and what becomes of them: after a restart (ensure_recovered), and on a clean stop of
the server (interrupt_live_runs)."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from .. import store
from .registry import ACTIVE_RUNS

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async


def single_process() -> bool:
    """Without Redis every run lives in this process, so a run this process does not know is an orphan."""
    return not settings.REDIS_URL


def stale_before():
    """A running run whose heartbeat is older than this belongs to a process that died."""
    return timezone.now() - timedelta(seconds=settings.AGENTWEB_RUN_STALE_SECONDS)


# --- a clean stop of the server ----------------------------------------------------------------

# How long a stopping server waits for its live runs to write what they have.
STOP_WRITE_SECONDS = 10.0
server_stopping = False


async def interrupt_live_runs() -> int:
    """The server stops cleanly (SIGTERM; agentweb/serve.py): every run streaming in this process writes the text it
    has streamed and its finished tool calls, and becomes interrupted (Retry offers to answer again), before the
    process exits. Waiting runs are rows, not tasks: they stay waiting. Returns how many runs were interrupted."""
    global server_stopping
    server_stopping = True
    tasks = [active.task for active in ACTIVE_RUNS.values() if not active.task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        _, late = await asyncio.wait(tasks, timeout=STOP_WRITE_SECONDS)
        log.info("server stopping: %d run(s) interrupted, their partial text kept", len(tasks) - len(late))
        if late:
            log.warning("server stopping: %d run(s) did not finish writing within %g s", len(late), STOP_WRITE_SECONDS)
    return len(tasks)


# --- after a restart ----------------------------------------------------------------------------

_recovered = False


async def ensure_recovered() -> None:
    """Once per process: runs a dead process left running become interrupted; waiting runs stay waiting."""
    global _recovered
    if _recovered:
        return
    _recovered = True
    cutoff = None if single_process() else stale_before()
    keep = {active.run_id for active in ACTIVE_RUNS.values()}
    threads = await db(store.interrupt_stale_runs)(stale_before=cutoff, keep=keep)
    if threads:
        log.info("marked %d run(s) left by a stopped server as interrupted", len(threads))
