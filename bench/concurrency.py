"""concurrency: 50 people each watching a stream of 100 tokens/s (50 users, one websocket and one thread
each), while a page is fetched every 100 ms from another process. Daphne's CPU share, the tokens' latency
and the page's latency, against a bare httpx reader of the same 50 streams and the same page on an idle app."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

from .app import BenchApp, Client, new_id
from .common import PYTHON, ROOT, CpuMeter, Result, clean_env, fmt, percentile, summary_ms
from .relay import WINDOW_MS, floor
from .tokens import Spec


def probe(app: BenchApp, seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [
            PYTHON,
            "-m",
            "bench.pageprobe",
            "--url",
            f"{app.daphne.url}/",
            "--cookie",
            app.cookie,
            "--seconds",
            str(seconds),
            "--interval",
            "0.1",
        ],
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.PIPE,
        text=True,
    )


def probe_result(process: subprocess.Popen) -> dict:
    out, _ = process.communicate(timeout=300)
    if process.returncode:
        raise RuntimeError("the page probe failed")
    data = json.loads(out.strip().splitlines()[-1])
    if set(data["statuses"]) != {"200"}:
        raise RuntimeError(f"the page answered {data['statuses']}")
    return data


async def concurrency(app: BenchApp, result: Result, smoke: bool) -> None:
    streams = 5 if smoke else int(os.environ.get("BENCH_STREAMS") or 50)
    rate = 100
    seconds = 0.5 if smoke else 10
    tokens = int(rate * seconds)
    cookies = [cookie for _, cookie in app.users[1 : streams + 1]]

    idle = probe_result(probe(app, 0.5 if smoke else 3))
    clients = [Client(app, cookie) for cookie in cookies]
    await asyncio.gather(*(c.__aenter__() for c in clients))
    try:
        warm = await asyncio.gather(*(c.turn(Spec(id=new_id("warm"), tokens=5)) for c in clients))
        specs = [Spec(id=new_id("conc"), tokens=tokens, rate=rate) for _ in clients]
        pages = probe(app, seconds)
        meter = CpuMeter(app.daphne.pid)
        turns = await asyncio.gather(
            *(c.turn(s, thread=w.thread) for c, s, w in zip(clients, specs, warm, strict=True))
        )
        cpu, wall = meter.read()
        waited = meter.waited()
        busy = probe_result(pages)
    finally:
        await asyncio.gather(*(c.__aexit__(None, None, None) for c in clients), return_exceptions=True)

    latencies, lost = [], 0
    frames = sum(len(turn.deltas()) for turn in turns)
    for turn in turns:
        seqs, lats = turn.stamps()
        latencies += lats
        lost += tokens - len(set(seqs))
    (floor_run,) = floor(app, Spec(tokens=tokens, rate=rate), streams=streams)
    app_ms = summary_ms(latencies)
    floor_ms = floor_run["latency_ms"]
    # CPU per second of streaming: over the model's `seconds`, not the wall time, which stretches when the app
    # falls behind (then the share over the wall time understates what it would need to keep up).
    share = cpu / seconds * 100
    floor_share = floor_run["cpu_s"] / seconds * 100
    page99 = percentile(busy["latencies_ms"], 99)
    idle99 = percentile(idle["latencies_ms"], 99)
    result.details.update(
        streams=streams,
        rate=rate,
        seconds=seconds,
        cpu_s=cpu,
        wall_s=wall,
        runqueue_wait_s=waited,
        delta_frames=frames,
        cpu_us_per_frame=cpu * 1e6 / frames if frames else None,
        latency_ms=app_ms,
        floor=floor_run,
        lost=lost,
        page_busy=summary_ms([v * 1000 for v in busy["latencies_ms"]]),
        page_idle=summary_ms([v * 1000 for v in idle["latencies_ms"]]),
        page_bytes=busy["bytes"],
    )
    result.add(
        f"Daphne CPU, {streams} streams × {rate} tokens/s",
        share,
        "% of a core",
        target="≤ 50 % of a core",
        floor=floor_share,
        passed=share <= 50,
        note=f"{cpu:.2f} s CPU for {seconds:g} s of streams ({cpu * 1e6 / (tokens * streams):.0f} µs/token); "
        f"the turns took {wall:.1f} s; Daphne waited {waited:.2f} s for a CPU; floor: the reader process, same streams",
    )
    added = app_ms["p99"] - floor_ms["p99"]
    result.add(
        "token latency p99",
        app_ms["p99"],
        "ms",
        target=f"added ≤ {WINDOW_MS + 5:g} ms (window + 5)",
        floor=floor_ms["p99"],
        passed=added <= WINDOW_MS + 5 and lost == 0,
        judged=added,
        judged_as="added",
        note=f"p50 {fmt(app_ms['p50'], 'ms')} (floor {fmt(floor_ms['p50'], 'ms')}); {lost} tokens lost",
    )
    result.add(
        "page p99 meanwhile",
        page99,
        "ms",
        target="≤ 50 ms",
        floor=idle99,
        passed=page99 <= 50,
        note=f"GET / every 100 ms, {len(busy['latencies_ms'])} requests; floor: the same page, app idle",
    )
