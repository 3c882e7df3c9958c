"""The loop that fires due schedules, one per process that fires them (schedules/apps.py owns it)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from channels.db import database_sync_to_async
from django.conf import settings
from django.db.models import Min
from django.utils import timezone

from .firing import CLAIM_BATCH, claim_due, fire_claim_safely, reclaim_stale
from .models import Schedule

log = logging.getLogger("agentweb.schedules")


#: A claim's trip to the database, on a thread of its own rather than the one database thread that the runs' reads
#: and writes queue on: behind a burst of turns being opened, a claim waited there for seconds, and so did its slot.
def claim_db(function):
    return database_sync_to_async(function, thread_sensitive=False)


#: The least a ticker sleeps between two claims: a schedule is claimed within this of its slot, together with every
#: other due meanwhile. Schedules due a few tens of milliseconds apart (1,000 spread over a minute) were claimed one
#: by one at 0.05 s, and each claim's fixed trips (the claim, the agent, groups and tools read, the next due) cost
#: 45 ms of a worker's CPU per firing; at 0.5 s a claim takes the half second's firings together and a firing costs
#: 17-21 ms (bench schedules, docs/performance.md "Issue 39 on a slower machine").
LEAST_SLEEP_S = 0.5


#: The most firings a ticker has claimed and not yet started: it claims more only as they start. A burst is then
#: shared among the processes as each can start them; with a claim of 50 whenever one was due, one worker took 150
#: of 200 and the other started the rest and sat idle (bench schedules, docs/performance.md P35).
AHEAD = 48
#: The most firings of one claim. A claim's firings are opened together (firing.py open_firings), so a ticker may
#: claim the next while the last is being opened and started: with one claim of 16 at a time, 1,000 due at once were
#: claimed 26 s after their slot while the workers had CPU to spare (docs/performance.md P36).
TOGETHER = 16


async def claim(now: datetime | None = None, limit: int = CLAIM_BATCH, stale: bool = True) -> list[int]:
    """The firings this process is to start: the due schedules it claimed (`limit` at most), and (`stale`) stale
    claims it took over."""
    claimed = await claim_db(claim_due)(now, limit) if limit > 0 else []
    return claimed + (await claim_db(reclaim_stale)(now) if stale else [])


async def tick(now: datetime | None = None) -> list[int]:
    """Claim what is due and start it, to the last: the ScheduleRuns fired (their ids)."""
    jobs = await claim(now)
    if jobs:
        await fire_claim_safely(jobs)
    return jobs


def next_due() -> datetime | None:
    return Schedule.objects.filter(paused=False).aggregate(at=Min("next_run_at"))["at"]


class Ticker:
    """Claims every AGENTWEB_SCHEDULE_TICK seconds, or sooner when a schedule is due before then: a slot is fired
    within moments of its time, not up to a tick late."""

    def __init__(self):
        self.task: asyncio.Task | None = None
        #: The claims being started, each a task (kept, so that none is collected before it ends), with its number of
        #: firings. The ticker claims on meanwhile, up to AHEAD firings at a time: the rest of a burst goes to
        #: whichever process has room first.
        self.firing: dict[asyncio.Task, int] = {}
        #: When this ticker last looked for stale claims (loop time): once a tick is enough for claims that become
        #: stale only after AGENTWEB_SCHEDULE_CLAIM_STALE_SECONDS, not once a claim, every half second of a burst.
        self.stale_checked = float("-inf")

    def start(self) -> None:
        """Once per process, on the running (or about to run) event loop."""
        if self.task is None:
            self.task = asyncio.get_event_loop().create_task(self.run(), name="schedules-ticker")

    def forget(self, task: asyncio.Task) -> None:
        self.firing.pop(task, None)

    async def run(self) -> None:
        while True:
            try:
                now = asyncio.get_running_loop().time()
                stale = now - self.stale_checked >= settings.AGENTWEB_SCHEDULE_TICK
                if stale:
                    self.stale_checked = now
                jobs = await claim(limit=min(CLAIM_BATCH, TOGETHER, AHEAD - sum(self.firing.values())), stale=stale)
                if jobs:
                    firing = fire_claim_safely(jobs)
                    task = asyncio.get_running_loop().create_task(firing, name=f"schedule-runs-{jobs[0]}")
                    self.firing[task] = len(jobs)
                    task.add_done_callback(self.forget)
                soonest = await claim_db(next_due)()
            except Exception:  # the database out of reach for a moment: the next tick tries again
                log.exception("due schedules could not be claimed")
                soonest = None
            wait = settings.AGENTWEB_SCHEDULE_TICK
            if soonest is not None:
                wait = min(wait, max(LEAST_SLEEP_S, (soonest - timezone.now()).total_seconds()))
            await asyncio.sleep(wait)
