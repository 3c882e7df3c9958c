"""Stop: a run streaming here, in another process, waiting for a worker or for a person; and the run's inbox,
where other processes' Stops and answers to its tools' requests for input arrive."""

from __future__ import annotations

import asyncio
import logging
import uuid

from channels.db import database_sync_to_async

from delivery import run_group

from .. import live, store
from ..live import events
from ..store import run_claims
from . import recovery
from .interaction import take_input
from .recovery import single_process
from .registry import ACTIVE_RUNS, stopped_before_start

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async


async def cancel(thread_id: uuid.UUID) -> bool:
    """Stop the thread's run: a streaming one at once, a waiting one by cancelling its waiting calls, and one that
    says running while no task runs it (something failed between opening it and starting its task) in the
    database: Stop always ends the thread's run."""
    active = ACTIVE_RUNS.get(thread_id)
    if active is not None and not active.task.done():
        active.task.cancel()
        return True
    if not single_process():
        return await _cancel_elsewhere(thread_id)
    cancelled = await db(store.cancel_waiting_run)(thread_id=thread_id, running_too=True)
    if cancelled is None:
        return False
    run_id, call_ids = cancelled
    if _stop_task_started_meanwhile(thread_id, run_id):
        return True
    await live.publish(thread_id, _cancelled(run_id, call_ids))
    return True


def _cancelled(run_id: int, call_ids: list[str]) -> list[events.Event]:
    """What tabs are told of a run stopped in the database: its waiting calls, then the run."""
    return [*(events.tool_call_cancelled(call_id) for call_id in call_ids), events.run_cancelled(run_id)]


def _stop_task_started_meanwhile(thread_id: uuid.UUID, run_id: int) -> bool:
    """After the database cancelled a run no task of this process ran: its task may have started meanwhile (it is
    cancelled, and says so itself: True), or may start later (start_here then does not start it)."""
    active = ACTIVE_RUNS.get(thread_id)
    if active is not None and active.run_id == run_id:
        active.task.cancel()
        return True
    stopped_before_start.add(run_id)
    return False


async def _cancel_elsewhere(thread_id: uuid.UUID) -> bool:
    """With several processes: the run streams in another process (tell its group), waits for a worker to take
    it (cancel it before one does), or waits for a person (cancel its waiting calls here)."""
    live_run = await recovery.live_run(thread_id)
    if live_run is not None and live_run.owner:
        await live.delivery().tell(run_group(thread_id), {"type": "run.cancel", "run": live_run.run_id})
        return True
    if live_run is not None and await db(run_claims.cancel_untaken)(run_id=live_run.run_id):
        await live.publish(thread_id, [events.run_cancelled(live_run.run_id)])
        return True
    cancelled = await db(store.cancel_waiting_run)(thread_id=thread_id)
    if cancelled is None:
        return False
    await live.publish(thread_id, _cancelled(*cancelled))
    return True


async def read_inbox(thread_id: uuid.UUID, run_id: int, address: str) -> None:
    """What other processes send to the run: a Stop (`run.cancel`), a person's answer to a tool's request for input
    (`run.input`)."""
    delivery = live.delivery()
    try:
        while True:
            message = await delivery.receive(address)
            try:
                if message["type"] == "run.cancel" and message.get("run") == run_id:
                    active = ACTIVE_RUNS.get(thread_id)
                    if active is not None and active.run_id == run_id:
                        active.task.cancel()
                elif message["type"] == "run.input" and message.get("run") == run_id:
                    await take_input(thread_id, run_id, message)
            except Exception:
                log.exception("run %s: handling %r from another process failed", run_id, message.get("type"))
    finally:
        await asyncio.shield(delivery.detach(address, run_group(thread_id)))
