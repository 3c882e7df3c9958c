"""Where a thread's runs live, chosen once when the app starts (chat/apps.py): the only place that knows the shape of
the deployment, so that starting, stopping and recovering a run ask it rather than the settings.

- `AllHere`, one process (no Redis): every run lives in this process; a run it does not know is an orphan.
- `Shared`, processes sharing Redis: a process takes (claims) a run before it runs it, writing its inbox's address
  on the run (`Run.owner`, chat/store/run_claims.py), so that others know it is taken and live, and reach it there.
- `InWorkers`, the same with AGENTWEB_RUN_WORKERS: a Daphne process hands every run over to the run workers
  (chat/worker.py), one of which takes it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime

from channels.db import database_sync_to_async
from django.apps import apps

from delivery import Delivery, run_group

from .. import store
from ..store import run_claims

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async

#: What a process taking a run reads its inbox with: (thread, run, address) → the reading (chat/runs/cancel.py).
ReadInbox = Callable[[uuid.UUID, int, str], Awaitable[None]]
#: What becomes of a dead process's run (chat/runs/recovery.py interrupt_dead_run).
InterruptDead = Callable[[uuid.UUID, int], Awaitable[None]]


class Taken:
    """A run this process may start: with its inbox's reading, where the runs are shared."""

    __slots__ = ("inbox",)

    def __init__(self, inbox: asyncio.Task | None = None):
        self.inbox = inbox


class AllHere:
    """One process: every run lives here."""

    #: The turn's trip to the database thread reads the run's setup too: this process runs the run.
    prepares_in_turn = True
    #: Runs go to the run workers rather than start here.
    hands_over = False

    async def take(self, thread_id: uuid.UUID, run_id: int, read_inbox: ReadInbox, written: str = "") -> Taken | None:
        """This process's claim on a run it is about to start; None when the run is no longer there to take. Here
        every run is this process's: nothing to write, and no await (a Stop that came first is seen by start_here).
        `written`: the inbox address (inbox_address) the run was taken with already, in the trip that opened it."""
        return Taken()

    async def inbox_address(self) -> str:
        """An address to take a run with in the trip that opens it (take's `written`); "" where nothing is written."""
        return ""

    async def recover(self, keep: set[int], stale_before: datetime, interrupt_dead: InterruptDead) -> None:
        """After a start: every run a stopped server left running (none of `keep`) becomes interrupted."""
        threads = await db(store.interrupt_stale_runs)(stale_before=None, keep=keep)
        if threads:
            log.info("marked %d run(s) left by a stopped server as interrupted", len(threads))


class Shared(AllHere):
    """Processes sharing Redis: each run is taken by one of them, and reached through its inbox."""

    prepares_in_turn = False

    def __init__(self, delivery: Delivery):
        self.delivery = delivery

    async def take(self, thread_id: uuid.UUID, run_id: int, read_inbox: ReadInbox, written: str = "") -> Taken | None:
        # The run's inbox is written on the run, so that other processes know it is taken and live.
        address = written or await self.delivery.new_address()
        if not written and not await db(run_claims.take)(run_id=run_id, owner=address):
            return None  # cancelled before any process took it, or taken by another
        await self.delivery.attach(address, run_group(thread_id))
        reading = asyncio.get_running_loop().create_task(read_inbox(thread_id, run_id, address), name=f"inbox-{run_id}")
        return Taken(reading)

    async def inbox_address(self) -> str:
        return await self.delivery.new_address()

    async def recover(self, keep: set[int], stale_before: datetime, interrupt_dead: InterruptDead) -> None:
        """After a start: only the runs of processes that died (no heartbeat), each with what its tabs were shown;
        the other processes' runs go on."""
        for thread_id, run in await db(run_claims.stale_runs)(stale_before=stale_before, keep=keep):
            await interrupt_dead(thread_id, run.run_id)


class InWorkers(Shared):
    """Daphne processes hand every run over to the run workers."""

    hands_over = True


def choose(delivery: Delivery, *, run_workers: bool) -> AllHere:
    """The deployment's placement of runs, from the delivery the app started with and AGENTWEB_RUN_WORKERS (which the
    settings refuse without Redis)."""
    if not delivery.shared:
        return AllHere()
    return InWorkers(delivery) if run_workers else Shared(delivery)


def placement() -> AllHere:
    """Where this deployment's runs live (chosen by chat/apps.py as the app starts)."""
    return apps.get_app_config("chat").placement
