"""Which runs are orphans, and what becomes of them: after a restart (ensure_recovered), when a process finds a
thread's run dead (live_run), and on a clean stop of the server (interrupt_live_runs)."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from datetime import timedelta

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from delivery import BACKOFF_MOST, REDIS_GONE, backoff

from .. import live, store
from ..live import events
from ..store import run_claims
from .placement import placement
from .registry import runs_here

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async


def stale_before():
    """A running run whose heartbeat is older than this belongs to a process that died."""
    return timezone.now() - timedelta(seconds=settings.AGENTWEB_RUN_STALE_SECONDS)


# --- a clean stop of the server ----------------------------------------------------------------

# How long a stopping server waits for its live runs to write what they have.
STOP_WRITE_SECONDS = 10.0


async def interrupt_live_runs() -> int:
    """The server stops cleanly (SIGTERM; agentweb/serve.py): every run streaming in this process writes the text it
    has streamed and its finished tool calls, and becomes interrupted (Retry offers to answer again), before the
    process exits. Waiting runs are rows, not tasks: they stay waiting. Returns how many runs were interrupted."""
    here = runs_here()
    here.stopping = True
    tasks = [active.task for active in here.active.values() if not active.task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        _, late = await asyncio.wait(tasks, timeout=STOP_WRITE_SECONDS)
        log.info("server stopping: %d run(s) interrupted, their partial text kept", len(tasks) - len(late))
        if late:
            log.warning("server stopping: %d run(s) did not finish writing within %g s", len(late), STOP_WRITE_SECONDS)
    return len(tasks)


# --- Redis out of reach -------------------------------------------------------------------------

#: How long a process keeps trying to tell a run's tabs how it ended while Redis is out of reach (a tab that looks at
#: the thread later is shown it from the database).
TELL_FOR_SECONDS = 300.0


def tell_when_redis_is_back(thread_id: uuid.UUID, told: list[events.Event]) -> None:
    """Publish `told` (how a run ended while Redis was out of reach: chat/runs/execute.py) once Redis answers again,
    in a task of its own, trying with backoff for up to TELL_FOR_SECONDS. Redis may have restarted empty: the log
    then numbers from the database's ceiling (delivery/log.py), past every number a tab has seen, so a tab that
    missed events sees the gap and takes a snapshot."""
    if not told:
        return
    runs_here().in_background(_tell(thread_id, told))


async def _tell(thread_id: uuid.UUID, told: list[events.Event]) -> None:
    loop = asyncio.get_running_loop()
    give_up_at, failures = loop.time() + TELL_FOR_SECONDS, 0
    while True:
        try:
            await live.last_seq(thread_id)  # answered: Redis is back
            # Every process tries Redis again within the backoff's longest wait, and joins its sockets' groups again
            # before it reads (delivery/redis_layer.py): told sooner, a tab whose group was lost would not hear it.
            await asyncio.sleep(BACKOFF_MOST + 1)
            await live.publish(thread_id, told)
            return
        except REDIS_GONE:
            failures += 1
            if loop.time() > give_up_at:
                log.warning("thread %s: its tabs could not be told how its run ended (Redis out of reach)", thread_id)
                return
            await asyncio.sleep(backoff(failures))


# --- a process that died ------------------------------------------------------------------------


async def live_run(thread_id: uuid.UUID) -> run_claims.LiveRun | None:
    """The thread's running run, if its process is alive. One whose process died (no heartbeat for
    AGENTWEB_RUN_STALE_SECONDS) becomes interrupted here (interrupt_dead_run), so whoever asked sees it as such."""
    run = await db(run_claims.running_run)(thread_id=thread_id, stale_before=stale_before())
    if run is not None and not run.alive:
        await interrupt_dead_run(thread_id, run.run_id)
        return None
    return run


async def interrupt_dead_run(thread_id: uuid.UUID, run_id: int) -> None:
    """A dead process's run becomes interrupted with the text its tabs were shown, and they are told, as a clean stop
    tells them (message.completed with the partial text, run.failed). The process wrote its answer's text every
    AGENTWEB_FLUSH_INTERVAL (2 s, chat/flush.py), so after a kill -9 the database lacks up to that much of it; the
    thread's log (Redis, shared by every process) still holds the deltas it published, from its message.started on."""
    texts = await streamed_texts(thread_id)
    closed = await db(run_claims.interrupt_dead_run)(run_id=run_id, stale_before=stale_before(), texts=texts)
    if closed is None:  # another process interrupted it first, and told the tabs
        return
    log.info("run %s: its process stopped answering; interrupted, %d answer(s) kept", run_id, len(closed))
    told = [events.message_completed(message, content, "error") for message, content in closed]
    await live.publish(thread_id, [*told, events.run_failed(run_id, store.STOPPED_SERVER_ERROR)])


async def streamed_texts(thread_id: uuid.UUID) -> dict[int, str]:
    """The text of the thread's latest answer as its deltas in the log's tail tell it, by message id; empty when the
    tail does not reach back to its message.started (the answer streamed longer than the tail keeps)."""
    return answer_text(await live.read_from_last(thread_id, "message.started") or [])


def answer_text(tail: list[str]) -> dict[int, str]:
    """The text of the answer whose message.started begins `tail` (events as the log keeps them), from its deltas, by
    message id; empty when the tail does not begin with one."""
    told = [event for event in map(_event, tail) if event is not None]
    if not told or told[0]["type"] != "message.started":
        return {}
    message = told[0]["message"]["id"]
    deltas = [event for event in told[1:] if event["type"] == "message.delta" and event.get("message") == message]
    return {message: "".join(delta["text"] for delta in deltas)}


def _event(text: str) -> dict | None:
    """One entry of the log as an event: a JSON object with a "type". Anything else (text that is not JSON, or JSON
    that is not such an object) is no event of the answer, and is passed over rather than trusted by its spelling."""
    try:
        event = json.loads(text)
    except ValueError:
        return None
    return event if isinstance(event, dict) and isinstance(event.get("type"), str) else None


# --- after a restart ----------------------------------------------------------------------------


async def ensure_recovered() -> None:
    """Once per process: runs a dead process left running become interrupted; waiting runs stay waiting."""
    here = runs_here()
    if here.recovered:
        return
    here.recovered = True
    keep = {active.run_id for active in here.active.values()}
    await placement().recover(keep, stale_before(), interrupt_dead_run)
