"""Retention: events older than AGENTWEB_AUDIT_RETENTION_DAYS are removed (0 keeps them forever), by
`manage.py audit prune` and by each process's pruner, which also reads in the admin's bulk entries."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from . import admin_log
from .actions import Action
from .models import Event
from .recording import record

log = logging.getLogger("agentweb.audit")

#: Rows removed per statement: a long log is pruned in short transactions, never one that locks it all.
PRUNE_BATCH = 5000
#: How often a process's pruner runs (and once as it starts).
PRUNE_EVERY_S = 3600.0


def cutoff(now: datetime | None = None, days: int | None = None) -> datetime | None:
    """The oldest time kept, or None when the log is kept forever."""
    days = settings.AGENTWEB_AUDIT_RETENTION_DAYS if days is None else days
    if days <= 0:
        return None
    return (now or timezone.now()) - timedelta(days=days)


def prune(now: datetime | None = None, days: int | None = None) -> int:
    """Remove the events older than the retention; returns how many. The pruning itself is recorded when it removed
    any, so that a reader of the log sees where its start went."""
    oldest = cutoff(now, days)
    if oldest is None:
        return 0
    removed = 0
    while True:
        batch = list(Event.objects.filter(at__lt=oldest).order_by("at").values_list("pk", flat=True)[:PRUNE_BATCH])
        if not batch:
            break
        removed += Event.objects.filter(pk__in=batch).delete()[0]
    if removed:
        record(Action.AUDIT_PRUNED, detail={"removed": removed, "before": oldest.isoformat(timespec="seconds")})
    return removed


def housekeeping() -> None:
    """What the pruner does each time: read in what the admin wrote without a signal, then prune."""
    admin_log.read_in(since=cutoff())
    prune()


class Pruner:
    """Prunes every PRUNE_EVERY_S in the processes that fire schedules (agentweb/serve.py start_schedules). Several
    processes pruning at once remove the same rows once: a delete of rows gone already removes nothing."""

    def __init__(self):
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        """Once per process, on the running (or about to run) event loop."""
        if self.task is None:
            self.task = asyncio.get_event_loop().create_task(self.run(), name="audit-pruner")

    async def run(self) -> None:
        while True:
            try:
                await database_sync_to_async(housekeeping, thread_sensitive=False)()
            except Exception:  # the database out of reach for a moment: the next round tries again
                log.exception("the audit log could not be pruned")
            await asyncio.sleep(PRUNE_EVERY_S)
