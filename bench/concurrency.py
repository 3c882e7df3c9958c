"""concurrency: 50 people each watching a stream of 100 tokens/s (50 users, one websocket and one thread
each), while a page is fetched every 100 ms from another process. Daphne's CPU share, the tokens' latency
and the page's latency, against a bare httpx reader of the same 50 streams and the same page on an idle app."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

from .app import BenchApp, Client, new_id
from .common import (
    PYTHON,
    ROOT,
    CpuMeter,
    Result,
    clean_env,
    collector_paused,
    fmt,
    median,
    percentile,
    server_apart,
    summary_ms,
)
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


RUNS = 3  # the machine's other processes sway one run by ±10 % of a core; the median of three is reported


async def measure_once(app: BenchApp, clients: list[Client], warm: list, rate: int, seconds: float) -> dict:
    """One run: every client streams `rate` tokens/s for `seconds` on its thread while a page is fetched."""
    streams = len(clients)
    tokens = int(rate * seconds)
    specs = [Spec(id=new_id("conc"), tokens=tokens, rate=rate) for _ in clients]
    pages = probe(app, seconds)
    meter = CpuMeter(app.daphne.pid)
    with collector_paused():
        turns = await asyncio.gather(
            *(c.turn(s, thread=w.thread) for c, s, w in zip(clients, specs, warm, strict=True))
        )
    cpu, wall = meter.read()
    waited = meter.waited()
    busy = probe_result(pages)
    latencies, lost = [], 0
    for turn in turns:
        seqs, lats = turn.stamps()
        latencies += lats
        lost += tokens - len(set(seqs))
    # "Meanwhile": the pages asked for while every stream was flowing, after the last one's first frame and before
    # the first one's last; the pages around fifty turns starting (or ending) at one instant are reported apart.
    flowing_from = max(turn.deltas()[0][0] for turn in turns)
    flowing_until = min(turn.deltas()[-1][0] for turn in turns)
    during = [
        latency
        for latency, sent in zip(busy["latencies_ms"], busy["sent_ns"], strict=True)
        if flowing_from <= sent <= flowing_until
    ]
    (floor_run,) = floor(app, Spec(tokens=tokens, rate=rate), streams=streams)
    app_ms = summary_ms(latencies)
    return {
        # CPU per second of streaming: over the model's `seconds`, not the wall time, which stretches when the
        # app falls behind (then the share over the wall time understates what it would need to keep up).
        "share": cpu / seconds * 100,
        "floor_share": floor_run["cpu_s"] / seconds * 100,
        "cpu_s": cpu,
        "wall_s": wall,
        "runqueue_wait_s": waited,
        "delta_frames": sum(len(turn.deltas()) for turn in turns),
        "latency_ms": app_ms,
        "floor_latency_ms": floor_run["latency_ms"],
        "added_p99": app_ms["p99"] - floor_run["latency_ms"]["p99"],
        "lost": lost,
        "page_ms": summary_ms([v * 1000 for v in during]),
        "page99": percentile(during, 99),
        "page_requests": len(during),
        "page99_all": percentile(busy["latencies_ms"], 99),
        "page_requests_all": len(busy["latencies_ms"]),
        "page_latencies_ms": busy["latencies_ms"],  # in the order they were sent, every 100 ms
        "page_bytes": busy["bytes"],
    }


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
        with server_apart(app.daphne.pid, [app.model_pid] if app.model_pid else []) as server_cpu:
            runs = [await measure_once(app, clients, warm, rate, seconds) for _ in range(1 if smoke else RUNS)]
    finally:
        await asyncio.gather(*(c.__aexit__(None, None, None) for c in clients), return_exceptions=True)

    def mid(key: str) -> float:
        return median([run[key] for run in runs])

    def spread(key: str, unit: str) -> str:
        return ", ".join(fmt(run[key], unit) for run in runs)

    share, floor_share = mid("share"), mid("floor_share")
    added, page99 = mid("added_p99"), mid("page99")
    lost = sum(run["lost"] for run in runs)
    cpu = sum(run["cpu_s"] for run in runs)
    idle99 = percentile(idle["latencies_ms"], 99)
    result.details.update(
        streams=streams,
        rate=rate,
        seconds=seconds,
        runs=runs,
        daphne_cpu=server_cpu,
        lost=lost,
        page_idle=summary_ms([v * 1000 for v in idle["latencies_ms"]]),
    )
    of_runs = f"median of {len(runs)} runs" if len(runs) > 1 else "one run"
    result.add(
        f"Daphne CPU, {streams} streams × {rate} tokens/s",
        share,
        "% of a core",
        target="≤ 50 % of a core",
        floor=floor_share,
        passed=share <= 50,
        note=f"{of_runs} ({spread('share', '% of a core')}); "
        f"{cpu * 1e6 / (tokens * streams * len(runs)):.0f} µs/token; "
        f"Daphne waited {sum(run['runqueue_wait_s'] for run in runs):.2f} s for a CPU in all; "
        "floor: the reader process, same streams",
    )
    result.add(
        "token latency p99",
        median([run["latency_ms"]["p99"] for run in runs]),
        "ms",
        target=f"added ≤ {WINDOW_MS + 5:g} ms (window + 5)",
        floor=median([run["floor_latency_ms"]["p99"] for run in runs]),
        passed=added <= WINDOW_MS + 5 and lost == 0,
        judged=added,
        judged_as="added",
        note=f"{of_runs} of the added p99 ({spread('added_p99', 'ms')}); p50 "
        f"{fmt(median([run['latency_ms']['p50'] for run in runs]), 'ms')}; {lost} tokens lost",
    )
    result.add(
        "page p99 meanwhile",
        page99,
        "ms",
        target="≤ 50 ms",
        floor=idle99,
        passed=page99 is not None and page99 <= 50,  # None: no page was sent while every stream flowed (a smoke run)
        note=f"{of_runs} ({spread('page99', 'ms')}); GET / every 100 ms, the {runs[0]['page_requests']} of a run "
        "sent while all streams flowed; with the pages around the turns' start and end "
        f"({runs[0]['page_requests_all']} a run): {spread('page99_all', 'ms')}; floor: the same page, app idle",
    )
