"""relay-max and relay-3000: one stream through the whole app (httpx → agent loop → recorder → coalescer →
channel layer → consumer → Daphne → websocket), against a bare httpx reader of the same stream."""

from __future__ import annotations

import itertools
import json

from .app import BenchApp, Client, new_id, server_log
from .common import CpuMeter, Result, fmt, median, percentile, run_json, summary_ms
from .tokens import Spec

WINDOW_MS = 16.0  # AGENTWEB_COALESCE_WINDOW's default; the bench does not change it


def floor(app: BenchApp, spec: Spec, repeat: int = 1, streams: int = 1) -> list[dict]:
    fields = {k: v for k, v in spec.__dict__.items() if k != "id"}
    args = ["-m", "bench.floor", "--base-url", app.model_url, "--spec", json.dumps(fields)]
    return run_json([*args, "--repeat", str(repeat), "--streams", str(streams)])["runs"]


async def one_stream(app: BenchApp, client: Client, spec: Spec) -> dict:
    meter = CpuMeter(app.daphne.pid)
    turn = await client.turn(spec)
    cpu, wall = meter.read()
    log = next((r for r in await server_log(app.model_url, spec.id) if r.get("t_first_token")), {})
    seqs, latencies = turn.stamps()
    last = turn.last_delta_ns()
    span_s = (last - log["t_first_token"]) / 1e9 if last and log else None
    frame_times = [t for t, e in turn.frames if e.get("type") == "message.delta"]
    gaps = [(b - a) / 1e6 for a, b in itertools.pairwise(frame_times)]
    final = turn.final_text()
    return {
        "tokens": len(seqs),
        "unique": len(set(seqs)),
        "lost": spec.tokens - len(set(seqs)),
        "duplicates": len(seqs) - len(set(seqs)),
        "in_order": seqs == sorted(seqs),
        "final_text_complete": final.count("§") == spec.tokens,
        "seconds": span_s,
        "tokens_per_s": len(seqs) / span_s if span_s else None,
        "cpu_s": cpu,
        "wall_s": wall,
        "runqueue_wait_s": meter.waited(),
        "cpu_us_per_token": cpu * 1e6 / spec.tokens,
        "cpu_share": cpu / wall,
        "delta_frames": len(frame_times),
        "max_frame_gap_ms": max(gaps) if gaps else None,
        "latency_us": latencies,
        "latency_ms": summary_ms(latencies),
        "first_token_us": (turn.first_delta_ns() - log["t_first_token"]) / 1000
        if log and turn.first_delta_ns()
        else None,
    }


async def relay_max(app: BenchApp, result: Result, smoke: bool) -> None:
    # 60,000 stamps are 840 KB of text: the run's message.completed carries it all, and Daphne closes a socket
    # (1011) that is sent a frame over 1 MiB (its default websocket_max_message_size).
    tokens = 3_000 if smoke else 60_000
    repeat = 1 if smoke else 3
    async with Client(app) as client:
        await client.turn(Spec(id=new_id("warm"), tokens=200))
        runs = []
        for _ in range(repeat):
            run = await one_stream(app, client, Spec(id=new_id("relay-max"), tokens=tokens))
            run.pop("latency_us")
            runs.append(run)
    floors = floor(app, Spec(tokens=tokens), repeat=repeat)
    best = max(runs, key=lambda r: r["tokens_per_s"] or 0)
    best_floor = max(floors, key=lambda r: r["tokens_per_s"] or 0)
    cpu = min(r["cpu_us_per_token"] for r in runs)
    cpu_floor = min(r["cpu_us_per_token"] for r in floors)
    lost = sum(r["lost"] for r in runs)
    result.details.update(tokens=tokens, repeat=repeat, runs=runs, floor_runs=floors)
    note = f"best of {repeat}; medians {median([r['tokens_per_s'] for r in runs]):,.0f} tokens/s"
    result.add(
        "tokens/s, one stream, unpaced",
        best["tokens_per_s"],
        "tokens/s",
        target="≥ 30,000 tokens/s",
        floor=best_floor["tokens_per_s"],
        passed=best["tokens_per_s"] >= 30_000 and lost == 0,
        note=note + (f"; {lost} tokens lost" if lost else ""),
    )
    result.add(
        "Daphne CPU per token",
        cpu,
        "µs",
        target="≤ 30 µs/token",
        floor=cpu_floor,
        passed=cpu <= 30,
        note=f"least of {repeat}; floor: the reader process's CPU per token",
    )


async def relay_3000(app: BenchApp, result: Result, smoke: bool) -> None:
    seconds = 0.3 if smoke else 10
    rate = 3000
    spec = Spec(id=new_id("relay-3000"), tokens=int(rate * seconds), rate=rate)
    async with Client(app) as client:
        await client.turn(Spec(id=new_id("warm"), tokens=200, rate=rate))
        run = await one_stream(app, client, spec)
    latencies = run.pop("latency_us")
    (floor_run,) = floor(app, spec)
    app_ms = run["latency_ms"]
    floor_ms = floor_run["latency_ms"]
    result.details.update(run=run, floor_run=floor_run, window_ms=WINDOW_MS)
    added50 = app_ms["p50"] - floor_ms["p50"]
    added99 = app_ms["p99"] - floor_ms["p99"]
    result.add(
        "tokens lost",
        run["lost"],
        "",
        target="0",
        floor=floor_run["lost"],
        passed=run["lost"] == 0 and run["duplicates"] == 0 and run["final_text_complete"],
        note=f"{run['tokens']} stamps received in {run['delta_frames']} frames; in order: {run['in_order']}",
    )
    result.add(
        "latency p50",
        app_ms["p50"],
        "ms",
        floor=floor_ms["p50"],
        judged=added50,
        judged_as="added",
        note=f"added {added50:.2f} ms",
    )
    result.add(
        "latency p99",
        app_ms["p99"],
        "ms",
        target=f"added ≤ {WINDOW_MS + 2:g} ms (window + 2)",
        floor=floor_ms["p99"],
        passed=added99 <= WINDOW_MS + 2,
        judged=added99,
        judged_as="added",
        note=f"max {fmt(app_ms['max'], 'ms')}; p99.9 {fmt(percentile(latencies, 99.9) / 1000, 'ms')}; "
        f"Daphne CPU {run['cpu_share'] * 100:.0f} % of a core",
    )
