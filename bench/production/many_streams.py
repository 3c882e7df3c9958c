"""many-streams: 2 Daphne processes and 1 worker; 200 sockets on 200 threads (one person each), every one
streaming 50 tokens/s for 20 s, while a page is fetched every 100 ms. Losses, added token latency, the page's
time, and each process's CPU per token against the bare reader of the same 200 streams."""

from __future__ import annotations

import asyncio
import os
import time

from ..app import new_id
from ..common import Result, fmt, percentile, summary_ms
from ..concurrency import probe_result
from ..relay import floor
from ..tokens import Spec
from .cluster import ProductionApp
from .measure import CpuMeters, run_clients, target, watched_connections
from .pages import page_probe

CLIENT_PROCESSES = 2


async def many_streams(app: ProductionApp, result: Result, smoke: bool) -> None:
    sockets = 10 if smoke else int(os.environ.get("BENCH_SOCKETS") or 200)
    rate = 50
    seconds = 1 if smoke else 20
    tokens = rate * seconds
    users = app.users[:sockets]
    threads = await asyncio.to_thread(app.threads_for, users)
    with app.processes(daphnes=2, workers=1) as running, watched_connections(result, app, 3):
        first = running.daphnes[0]
        idle = probe_result(page_probe(first, app.users[0][1], 0.5 if smoke else 3))
        targets = [
            target(
                running.daphnes[n % 2],
                cookie,
                thread=thread,
                message=Spec(id=new_id("many"), tokens=tokens, rate=rate).message(),
                timeout=seconds * 3 + 60,
            )
            for n, ((_, cookie), thread) in enumerate(zip(users, threads, strict=True))
        ]
        start_in = 5.0 if not smoke else 3.0
        jobs = [{"sockets": targets[k::CLIENT_PROCESSES], "start_in": start_in} for k in range(CLIENT_PROCESSES)]
        meters = CpuMeters(running.pids())
        pages = page_probe(first, app.users[0][1], start_in + seconds + 2)
        started = time.time_ns()
        outputs = await asyncio.to_thread(run_clients, "streams", jobs)
        cpu, _ = meters.read()
        busy = probe_result(pages)
    streams = [s for out in outputs for s in out["streams"]]
    errors = [s for s in streams if "error" in s or s.get("status") != "run.completed"]
    latencies = [v for s in streams if "latency_us" in s for v in s["latency_us"]]
    lost = sum(tokens - s.get("tokens", 0) + s.get("duplicates", 0) for s in streams)
    flowing_from = max((s["first_ns"] for s in streams if s.get("first_ns")), default=started)
    flowing_until = min((s["last_ns"] for s in streams if s.get("last_ns")), default=started)
    during = [
        latency
        for latency, sent in zip(busy["latencies_ms"], busy["sent_ns"], strict=True)
        if flowing_from <= sent <= flowing_until
    ]
    # The turns all go at once: how long each person waits for the answer's first token while the others start.
    first_waits = [(s["first_ns"] - s["sent_ns"]) / 1e6 for s in streams if s.get("first_ns") and s.get("sent_ns")]
    if app.floors:
        (floor_run,) = await asyncio.to_thread(floor, app, Spec(tokens=tokens, rate=rate), 1, sockets)
    else:  # an A/B (bench/production/ab.py): the app against a variant, not against the bare reader
        floor_run = {"latency_ms": {"p99": None}, "cpu_s": None}
    app_ms = summary_ms(latencies)
    floor_p99 = floor_run["latency_ms"]["p99"]
    added = app_ms["p99"] - floor_p99 if latencies and floor_p99 is not None else None
    all_tokens = tokens * sockets
    floor_us = floor_run["cpu_s"] * 1e6 / all_tokens if floor_run["cpu_s"] is not None else None
    per_token = {name: used * 1e6 / all_tokens for name, used in cpu.items()}
    page99 = percentile(during, 99)
    result.details.update(
        sockets=sockets,
        rate=rate,
        seconds=seconds,
        errors=errors[:10],
        error_count=len(errors),
        cpu_s=cpu,
        cpu_us_per_token=per_token,
        floor_run=floor_run,
        latency_ms=app_ms,
        page_ms=summary_ms([v * 1000 for v in during]),
        first_token_ms=summary_ms([wait * 1000 for wait in first_waits]),
        page_all_ms=summary_ms([v * 1000 for v in busy["latencies_ms"]]),
        page_idle_ms=summary_ms([v * 1000 for v in idle["latencies_ms"]]),
        frames=sum(s.get("frames", 0) for s in streams),
    )
    result.add(
        f"tokens lost, {sockets} streams × {rate} tokens/s over 2 Daphne processes",
        lost,
        "",
        target="0",
        passed=lost == 0 and not errors,
        note=f"{len(errors)} streams did not complete; {result.details['frames']:,} delta frames",
    )
    result.add(
        "token latency p99",
        app_ms["p99"],
        "ms",
        target="added ≤ 50 ms",
        floor=floor_run["latency_ms"]["p99"],
        passed=added is not None and added <= 50,
        judged=added,
        judged_as="added",
        note=f"p50 {fmt(app_ms['p50'], 'ms')}, max {fmt(app_ms['max'], 'ms')}; floor: the bare reader, same streams",
    )
    result.add(
        "page p99 meanwhile",
        page99,
        "ms",
        target="≤ 100 ms",
        floor=percentile(idle["latencies_ms"], 99),
        passed=page99 is not None and page99 <= 100,
        note=f"GET / every 100 ms from another process, {len(during)} sent while all streams flowed; floor: idle",
    )
    first = result.details["first_token_ms"]
    result.add(
        "first token after the turn, the slowest",
        first["max"],
        "ms",
        note=f"all {sockets} turns sent at once, each waiting while the others start: p50 {fmt(first['p50'], 'ms')}",
    )
    for name, used in per_token.items():
        share = cpu[name] / seconds * 100
        result.add(
            f"CPU per token, {name}",
            used,
            "µs",
            floor=floor_us,
            note=f"{share:.0f} % of a core over the {seconds} s streamed; floor: the bare reader of the same "
            f"streams ({fmt(floor_us and floor_run['cpu_s'] / seconds * 100, '% of a core')})",
        )
