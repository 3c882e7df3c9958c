"""Many claimers at once, each a thread with its own connection to the real database (PostgreSQL, and SQLite as `make
run` keeps it), over and over while the slots are due: every due schedule is claimed exactly once, and none is
left unclaimed."""

import pytest

from tests.support.concurrency import DATABASES, at_once, migrated

SCHEDULES = 60
CLAIMERS = 12

SETUP = """
from datetime import timedelta
from django.contrib.auth.models import User
from django.db.models import Count
from django.utils import timezone
from agents.models import Agent
from schedules.firing import claim_due
from schedules.models import Schedule, ScheduleRun

owner = User.objects.create_user("ada")
Agent.objects.create(name="Daily", slug="daily")
now = timezone.now()
Schedule.objects.bulk_create(
    Schedule(owner=owner, agent="daily", prompt="p", kind="every",
             every_minutes=1, next_run_at=now - timedelta(seconds=n))
    for n in range({schedules})
)
claimed = {{}}


def attempt(n):
    # Each claimer claims a few schedules at a time, as several ticks would, until nothing is due.
    import schedules.firing as firing
    from django.db import connection
    firing.CLAIM_BATCH = 5
    if {plain}:  # the conditional UPDATE alone, no row locks skipped: every claimer reads the same due rows
        connection.features.has_select_for_update_skip_locked = False
    while True:
        found = claim_due(now)
        if not found:
            return
        claimed[n] = claimed.get(n, 0) + len(found)


def after():
    per_schedule = ScheduleRun.objects.values("schedule").annotate(n=Count("pk")).values_list("n", flat=True)
    return {{
        "runs": ScheduleRun.objects.count(),
        "most_per_schedule": max(per_schedule, default=0),
        "still_due": Schedule.objects.filter(next_run_at__lte=now).count(),
        "claimers_that_claimed": len(claimed),
    }}
"""


@pytest.mark.parametrize("database", DATABASES)
def test_each_due_schedule_is_claimed_exactly_once_by_many_claimers_at_once(database, tmp_path):
    with migrated(database, tmp_path) as env:
        outcomes, found = at_once(env, SETUP.format(schedules=SCHEDULES, plain=False), CLAIMERS)
    assert outcomes == ["ok"] * CLAIMERS
    assert found["runs"] == SCHEDULES and found["most_per_schedule"] == 1 and found["still_due"] == 0
    if database == "postgresql":
        assert found["claimers_that_claimed"] > 1  # SKIP LOCKED shares the due schedules out


def test_on_postgresql_the_conditional_update_alone_claims_each_once(tmp_path):
    with migrated("postgresql", tmp_path) as env:
        outcomes, found = at_once(env, SETUP.format(schedules=SCHEDULES, plain=True), CLAIMERS)
    assert outcomes == ["ok"] * CLAIMERS
    assert found["runs"] == SCHEDULES and found["most_per_schedule"] == 1 and found["still_due"] == 0
