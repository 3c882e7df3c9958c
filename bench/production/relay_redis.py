"""relay-redis: one unpaced stream run by a worker and relayed through Redis to a Daphne process and its socket,
against the in-memory relay (`make bench`'s shape, measured in the same run) and the bare httpx reader."""

from __future__ import annotations

from types import SimpleNamespace

from ..app import Client, new_id
from ..common import Result, median, run_json
from ..relay import floor, one_stream
from ..tokens import Spec
from .cluster import ProductionApp
from .measure import CpuMeters


def as_bench_app(app: ProductionApp, daphne, cookie: str) -> SimpleNamespace:
    """What bench/app.py's Client and bench/relay.py's one_stream need of an app."""
    ws_url = daphne.url.replace("http://", "ws://") + "/ws/chat/"
    return SimpleNamespace(
        daphne=SimpleNamespace(url=daphne.url, ws_url=ws_url, pid=daphne.process.pid),
        model_url=app.model_url,
        cookie=cookie,
    )


async def relay_redis(app: ProductionApp, result: Result, smoke: bool) -> None:
    tokens = 3_000 if smoke else 60_000
    repeat = 1 if smoke else 3
    with app.processes(daphnes=1, workers=1) as running:
        shim = as_bench_app(app, running.daphnes[0], app.users[0][1])
        async with Client(shim) as client:
            await client.turn(Spec(id=new_id("warm"), tokens=200))
            runs = []
            for _ in range(repeat):
                meters = CpuMeters(running.pids())
                run = await one_stream(shim, client, Spec(id=new_id("relay-redis"), tokens=tokens))
                cpu, _ = meters.read()
                run.pop("latency_us")
                run["cpu_us_per_token_by_process"] = {k: v * 1e6 / tokens for k, v in cpu.items()}
                runs.append(run)
    if app.floors:
        memory = run_json(
            [
                "-m",
                "bench.production.memory_relay",
                "--model-url",
                app.model_url,
                "--tokens",
                str(tokens),
                "--repeat",
                str(repeat),
            ]
        )["runs"]
        floors = floor(app, Spec(tokens=tokens), repeat=repeat)
    else:  # an A/B (bench/production/ab.py): the app against a variant, not against the floors
        memory = floors = [{"tokens_per_s": 0, "tokens": 0, "delta_frames": 1, "cpu_us_per_token": 0}]
    best = max(r["tokens_per_s"] or 0 for r in runs)
    best_memory = max(r["tokens_per_s"] or 0 for r in memory)
    best_floor = max(r["tokens_per_s"] or 0 for r in floors)
    lost = sum(r["lost"] + r["duplicates"] for r in runs)
    per_frame = max(r["tokens"] / r["delta_frames"] for r in runs if r["delta_frames"])
    memory_per_frame = max(r["tokens"] / r["delta_frames"] for r in memory if r["delta_frames"])
    worker_cpu = min(r["cpu_us_per_token_by_process"]["worker-1"] for r in runs)
    daphne_cpu = min(r["cpu_us_per_token_by_process"]["daphne-1"] for r in runs)
    result.details.update(tokens=tokens, repeat=repeat, runs=runs, memory_runs=memory, floor_runs=floors)
    result.add(
        "tokens/s through Redis, one stream, unpaced",
        best,
        "tokens/s",
        target="≥ 50,000 tokens/s and ≥ ½ the in-memory relay",
        floor=best_memory,
        passed=best >= 50_000 and best >= best_memory / 2 and lost == 0,
        note=f"best of {repeat} (median {median([r['tokens_per_s'] or 0 for r in runs]):,.0f}); floor: the in-memory "
        f"relay (one Daphne, SQLite), best of {repeat}; the bare reader {best_floor:,.0f} tokens/s; "
        f"{lost} tokens lost or duplicated",
    )
    result.add(
        "tokens lost or duplicated",
        lost,
        "",
        target="0",
        passed=lost == 0 and all(r["final_text_complete"] for r in runs),
        note=f"{repeat} × {tokens:,} stamps checked, and each run's message.completed text",
    )
    result.add(
        "tokens per frame",
        per_frame,
        "",
        floor=memory_per_frame,
        note="tokens ÷ message.delta frames (the coalescing window's work; best of the runs); floor: the in-memory "
        "relay's",
    )
    result.add(
        "CPU per token: worker + Daphne",
        worker_cpu + daphne_cpu,
        "µs",
        floor=min(r["cpu_us_per_token"] for r in memory),
        note=f"worker {worker_cpu:.1f} µs, Daphne {daphne_cpu:.1f} µs (least of {repeat}); floor: the in-memory "
        f"relay's one process; the bare reader {min(r['cpu_us_per_token'] for r in floors):.1f} µs",
    )
