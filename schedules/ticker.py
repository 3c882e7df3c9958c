"""The loop that fires due schedules, one per process that fires them (schedules/apps.py owns it)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from channels.db import database_sync_to_async
from django.conf import settings
from django.db.models import Min
from django.utils import timezone

from .firing import claim_due, fire_safely, reclaim_stale
from .models import Schedule

log = logging.getLogger("agentweb.schedules")
db = database_sync_to_async

#: The least a ticker sleeps between two claims (a schedule due now is claimed within this of its slot).
LEAST_SLEEP_S = 0.05


async def tick(now: datetime | None = None) -> list[int]:
    """Claim what is due and start it: the ScheduleRuns fired (their ids)."""
    jobs = await db(claim_due)(now) + await db(reclaim_stale)(now)
    if jobs:
        await asyncio.gather(*(fire_safely(job) for job in jobs))
    return jobs


def next_due() -> datetime | None:
    return Schedule.objects.filter(paused=False).aggregate(at=Min("next_run_at"))["at"]


class Ticker:
    """Claims every AGENTWEB_SCHEDULE_TICK seconds, or sooner when a schedule is due before then: a slot is fired
    within moments of its time, not up to a tick late."""

    def __init__(self):
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        """Once per process, on the running (or about to run) event loop."""
        if self.task is None:
            self.task = asyncio.get_event_loop().create_task(self.run(), name="schedules-ticker")

    async def run(self) -> None:
        while True:
            try:
                await tick()
                soonest = await db(next_due)()
            except Exception:  # the database out of reach for a moment: the next tick tries again
                log.exception("due schedules could not be claimed")
                soonest = None
            wait = settings.AGENTWEB_SCHEDULE_TICK
            if soonest is not None:
                wait = min(wait, max(LEAST_SLEEP_S, (soonest - timezone.now()).total_seconds()))
            await asyncio.sleep(wait)
