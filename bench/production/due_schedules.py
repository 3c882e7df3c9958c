"""schedules: 1 Daphne process and 2 run workers; 1,000 schedules due at the same moment (a cron slot on the minute,
as `0 9 * * *` of many people is), each asking the bench model for a short answer. Each must fire exactly once; its
lateness is the model server's receipt of the run's request minus the slot; the chat's page is fetched all along,
its p99 while they fire against its p99 without them, the same page on the same processes a moment before."""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.request
from datetime import UTC, datetime, timedelta

from ..app import new_id
from ..common import Result, fmt, percentile
from ..concurrency import probe_result
from ..tokens import Spec
from .cluster import ProductionApp
from .measure import CpuMeters, watched_connections
from .pages import page_probe

#: A ticker that saw nothing due sleeps AGENTWEB_SCHEDULE_TICK (5 s): the schedules are made due later than that, so
#: that the bench measures what a deployment does with slots it knows of, not how long an idle ticker sleeps.
LEAD_S = 8.0
#: The page's p99 while the schedules fire may exceed its p99 without them by this much and count as unchanged
#: (two probes of the idle app differ by about that much on this machine).
PAGE_SLACK_MS = 10.0
TOKENS = 20


def make_schedules(app: ProductionApp, count: int, due: datetime, tag: str) -> list[int]:
    """`count` schedules of the bench's people, a new chat each time, all next due at `due`; their ids."""
    from agents.models import Agent
    from schedules.models import Schedule

    Agent.objects.get_or_create(slug="bench-schedules", owner=None, defaults={"name": "Bench schedules"})
    rows = [
        Schedule(
            owner_id=app.users[n % len(app.users)][0],
            agent="bench-schedules",
            prompt=Spec(id=f"{tag}-{n}", tokens=TOKENS).message(),
            kind=Schedule.Kind.EVERY,
            every_minutes=60,
            next_run_at=due,
        )
        for n in range(count)
    ]
    Schedule.objects.bulk_create(rows)
    app.close_django()
    return [row.pk for row in rows]


def firing_state(app: ProductionApp, schedule_ids: list[int]) -> dict:
    """What became of the schedules' firings: per schedule, how many; their statuses; their runs' statuses."""
    from django.db.models import Count

    from chat.models import Run
    from schedules.models import ScheduleRun

    jobs = ScheduleRun.objects.filter(schedule_id__in=schedule_ids)
    per = dict(jobs.values_list("schedule").annotate(n=Count("pk")).values_list("schedule", "n"))
    statuses = dict(jobs.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    run_ids = [r for r in jobs.values_list("run_id", flat=True) if r is not None]
    runs = dict(
        Run.objects.filter(pk__in=run_ids).values_list("status").annotate(n=Count("pk")).values_list("status", "n")
    )
    times = list(jobs.values_list("slot", "claimed_at", "run__started_at", "run__finished_at"))
    app.close_django()
    return {"per": per, "statuses": statuses, "runs": runs, "run_ids": run_ids, "times": times}


def model_log(model_url: str, tag: str) -> list[dict]:
    with urllib.request.urlopen(f"{model_url}/_log", timeout=30) as response:
        return [r for r in json.load(response) if str(r.get("id", "")).startswith(f"{tag}-")]


async def wait_done(app: ProductionApp, ids: list[int], timeout: float) -> dict:
    """Until every schedule has fired and every run it started has ended (or `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        state = await asyncio.to_thread(firing_state, app, ids)
        fired = len(state["per"]) == len(ids) and "claimed" not in state["statuses"]
        ended = sum(n for status, n in state["runs"].items() if status not in ("running", "waiting"))
        if (fired and ended == len(state["run_ids"])) or time.monotonic() > deadline:
            return state
        await asyncio.sleep(0.5)


async def due_schedules(app: ProductionApp, result: Result, smoke: bool) -> None:
    count = 20 if smoke else int(os.environ.get("BENCH_SCHEDULES") or 1000)
    idle_s = 2.0 if smoke else 15.0
    tag = new_id("sched")
    cookie = app.users[0][1]
    with app.processes(daphnes=1, workers=2) as running, watched_connections(result, app, 3):
        daphne = running.daphnes[0]
        idle = probe_result(page_probe(daphne, cookie, idle_s))
        due = (datetime.now(UTC) + timedelta(seconds=LEAD_S)).replace(microsecond=0)
        ids = await asyncio.to_thread(make_schedules, app, count, due, tag)
        due_ns = int(due.timestamp() * 1e9)
        # The page is fetched from 2 s before the slot until every run has ended (the probe is stopped then).
        await asyncio.sleep(max(0.0, (due_ns - time.time_ns()) / 1e9 - 2))
        meters = CpuMeters(running.pids())
        pages = page_probe(daphne, cookie, 600)
        try:
            state = await wait_done(app, ids, timeout=60 if smoke else 600)
        finally:
            pages.terminate()
        cpu, wall = meters.read()
        finished_ns = time.time_ns()
    out, _ = pages.communicate(timeout=30)
    busy = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"latencies_ms": [], "sent_ns": []}
    requests = await asyncio.to_thread(model_log, app.model_url, tag)

    # Exactly once: a ScheduleRun per schedule, a run per ScheduleRun, one first-step model request per schedule.
    firsts: dict[str, list[int]] = {}
    for record in requests:
        if record.get("step") == 0:
            firsts.setdefault(record["id"], []).append(record["t_request"])
    fired_once = sum(1 for n in state["per"].values() if n == 1)
    doubled = sum(1 for n in state["per"].values() if n > 1) + sum(1 for t in firsts.values() if len(t) > 1)
    started = state["statuses"].get("started", 0)
    completed = state["runs"].get("completed", 0)
    late_s = sorted((min(t) - due_ns) / 1e9 for t in firsts.values())
    claimed_s = [(claimed - slot).total_seconds() for slot, claimed, _, _ in state["times"]]
    opened_s = [(opened - slot).total_seconds() for slot, _, opened, _ in state["times"] if opened]
    ended_s = [(ended - slot).total_seconds() for slot, _, _, ended in state["times"] if ended]
    last_end_ns = due_ns + int(max(ended_s, default=0) * 1e9)
    during = [
        ms for ms, sent in zip(busy["latencies_ms"], busy["sent_ns"], strict=True) if due_ns <= sent <= last_end_ns
    ]
    idle99, idle50 = percentile(idle["latencies_ms"], 99), percentile(idle["latencies_ms"], 50)
    busy99 = percentile(during, 99)
    late99 = percentile(late_s, 99)
    once = fired_once == count and doubled == 0 and len(firsts) == count and started == count
    result.details.update(
        schedules=count,
        due=due.isoformat(),
        statuses=state["statuses"],
        runs=state["runs"],
        model_requests=len(firsts),
        late_s={q: percentile(late_s, q) for q in (50, 90, 99, 100)},
        claimed_s={q: percentile(claimed_s, q) for q in (50, 99, 100)},
        opened_s={q: percentile(opened_s, q) for q in (50, 99, 100)},
        ended_s={q: percentile(ended_s, q) for q in (50, 99, 100)},
        cpu_s=cpu,
        wall_s=wall,
        page_idle_ms=idle["latencies_ms"],
        page_during_ms=during,
        finished_after_s=(finished_ns - due_ns) / 1e9,
    )
    result.add(
        f"fired exactly once, {count:,} schedules due at one slot over 2 workers",
        fired_once,
        "",
        target=f"{count:,}, none twice",
        passed=once,
        note=f"ScheduleRuns {state['statuses']}; runs {state['runs']}; {len(firsts):,} first model requests, "
        f"{doubled} schedules fired or asked twice; {completed:,} runs completed",
    )
    result.add(
        "lateness p99 (model request − slot)",
        late99,
        "s",
        target="≤ 2 s",
        passed=once and late99 is not None and late99 <= 2.0,
        note=f"p50 {fmt(percentile(late_s, 50), 's')}, max {fmt(percentile(late_s, 100), 's')}; claimed p99 "
        f"{fmt(percentile(claimed_s, 99), 's')}, turn opened (Run.started_at) p99 {fmt(percentile(opened_s, 99), 's')}"
        f", last run ended {fmt(percentile(ended_s, 100), 's')} after the slot; {TOKENS} tokens each",
    )
    result.add(
        "chat page p99 while they fire",
        busy99,
        "ms",
        floor=idle99,
        target=f"unchanged (≤ without + {PAGE_SLACK_MS:g} ms)",
        passed=busy99 is not None and idle99 is not None and busy99 <= idle99 + PAGE_SLACK_MS,
        note=f"GET / every 100 ms from another process, {len(during)} sent from the slot until the last run ended "
        f"(p50 {fmt(percentile(during, 50), 'ms')}); floor: the same page on the same processes just before, "
        f"{len(idle['latencies_ms'])} fetched over {idle_s:g} s (p50 {fmt(idle50, 'ms')})",
    )
    for name, used in cpu.items():
        if used is not None:
            result.add(
                f"CPU per firing, {name}",
                used * 1000 / count,
                "ms",
                note=f"{used:.1f} s of CPU from 2 s before the slot until the runs ended ({wall:.0f} s)",
            )
