import asyncio
from datetime import UTC, datetime

import pytest
from channels.db import database_sync_to_async

from agents.models import Agent
from chat.models import Run
from schedules.models import Schedule

#: A moment all the tests' schedules are counted from.
T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)


@pytest.fixture
def agent(db):
    return Agent.objects.create(name="Daily", slug="daily")


def make_schedule(owner, **fields) -> Schedule:
    values = {"agent": "daily", "prompt": "News for {date} at {time}", "kind": "cron", "cron": "0 9 * * *"}
    values.update(fields)
    values.setdefault("next_run_at", T0)
    return Schedule.objects.create(owner=owner, **values)


async def runs_finished(timeout: float = 30) -> None:
    """Every run the test started has ended (the demo model answers at once)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    count = database_sync_to_async(lambda: Run.objects.filter(status__in=Run.ACTIVE_STATUSES).count())
    while await count():
        assert loop.time() < deadline, "runs still active"
        await asyncio.sleep(0.05)
