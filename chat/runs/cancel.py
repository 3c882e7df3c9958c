"""Stop, one way wherever the run is (streaming here, in another process, waiting for a worker or for a person); and the
run's inbox, where other processes' Stops and answers to its tools' requests for input arrive."""

from __future__ import annotations

import asyncio
import logging
import uuid

from channels.db import database_sync_to_async

from delivery import run_group

from .. import live, store
from ..broadcast import tell_inbox
from ..live import events
from . import recovery
from .interaction import take_input
from .registry import runs_here

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async


async def cancel(thread_id: uuid.UUID) -> bool:
    """Stop the thread's run, one way in every shape of deployment: a task of this process is cancelled at once; a
    task of another process hears it in its inbox (the run's group); a run no task runs (waiting for a person, handed
    to the workers and not taken yet, or opened while something failed before its task started) is cancelled in the
    database, its waiting calls with it. Stop always ends the thread's run."""
    active = runs_here().active.get(thread_id)
    if active is not None and not active.task.done():
        active.task.cancel()
        return True
    live_run = await recovery.live_run(thread_id)
    if live_run is not None and live_run.owner:
        await live.delivery().tell(run_group(thread_id), {"type": "run.cancel", "run": live_run.run_id})
        return True
    cancelled = await db(store.cancel_waiting_run)(thread_id=thread_id, running_too=True)
    if cancelled is None:
        return False
    run_id, call_ids = cancelled
    if _stop_task_started_meanwhile(thread_id, run_id):
        return True
    await live.publish(thread_id, _cancelled(run_id, call_ids))
    if call_ids:
        await tell_inbox(thread_id, "cancelled", call_ids)
    return True


def _cancelled(run_id: int, call_ids: list[str]) -> list[events.Event]:
    """What tabs are told of a run stopped in the database: its waiting calls, then the run."""
    return [*(events.tool_call_cancelled(call_id) for call_id in call_ids), events.run_cancelled(run_id)]


#: How long a run stopped before its task started is remembered (start_here looks it up at once, if ever).
STOPPED_BEFORE_START_SECONDS = 60.0


def _stop_task_started_meanwhile(thread_id: uuid.UUID, run_id: int) -> bool:
    """After the database cancelled a run no task of this process ran: its task may have started meanwhile (it is
    cancelled, and says so itself: True), or may start later (start_here then does not start it; a run another
    process would start is refused by its claim, and is forgotten here after a while)."""
    active = runs_here().active.get(thread_id)
    if active is not None and active.run_id == run_id:
        active.task.cancel()
        return True
    stopped = runs_here().stopped_before_start
    stopped.add(run_id)
    asyncio.get_running_loop().call_later(STOPPED_BEFORE_START_SECONDS, stopped.discard, run_id)
    return False


async def read_inbox(thread_id: uuid.UUID, run_id: int, address: str) -> None:
    """What other processes send to the run: a Stop (`run.cancel`), a person's answer to a tool's request for input
    (`run.input`)."""
    delivery = live.delivery()
    try:
        while True:
            message = await delivery.receive(address)
            try:
                if message["type"] == "run.cancel" and message.get("run") == run_id:
                    active = runs_here().active.get(thread_id)
                    if active is not None and active.run_id == run_id:
                        active.task.cancel()
                elif message["type"] == "run.input" and message.get("run") == run_id:
                    await take_input(thread_id, run_id, message)
            except Exception:
                log.exception("run %s: handling %r from another process failed", run_id, message.get("type"))
    finally:
        await asyncio.shield(delivery.detach(address, run_group(thread_id)))
