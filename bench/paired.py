"""A paired comparison of the app and a variant (bench/variant_asgi.py) on a shared, busy machine: both run at
the same time, so whatever else the machine does weighs on both alike.

Two Daphne processes serve two copies of one database (same users and sessions): the app as it is, and the app
with the variant's changes. Then, in rounds:

- streams: `--streams` people on each app at once, each watching a stream of `--rate` tokens/s for
  `--seconds`: token latency p50/p99 and Daphne's CPU per token, for each app;
- first token: turns sent to one app then the other, alternately: message.send → model request and the first
  token's latency, medians.

    python -m bench.paired --variant no-dispatch-hop [--streams 10] [--rate 100] [--seconds 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import shutil
import sys

from .app import BenchApp, Client, Daphne, new_id, server_log
from .common import CpuMeter, bench_model_server, load_average, median, summary_ms
from .tokens import Spec


async def streams(app: BenchApp, cookies: list[str], rate: int, seconds: float) -> dict:
    clients = [Client(app, cookie) for cookie in cookies]
    await asyncio.gather(*(c.__aenter__() for c in clients))
    try:
        warm = await asyncio.gather(*(c.turn(Spec(id=new_id("warm"), tokens=5)) for c in clients))
        meter = CpuMeter(app.daphne.pid)
        turns = await asyncio.gather(
            *(
                c.turn(Spec(id=new_id("pair"), tokens=int(rate * seconds), rate=rate), thread=w.thread)
                for c, w in zip(clients, warm, strict=True)
            )
        )
        cpu, _ = meter.read()
    finally:
        await asyncio.gather(*(c.__aexit__(None, None, None) for c in clients), return_exceptions=True)
    latencies, frames = [], 0
    for turn in turns:
        latencies += turn.stamps()[1]
        frames += len(turn.deltas())
    tokens = len(latencies)
    return {"latency_ms": summary_ms(latencies), "cpu_us_per_token": cpu * 1e6 / tokens, "frames": frames}


async def first_token(app: BenchApp, client: Client, thread: str) -> tuple[float, float]:
    spec = Spec(id=new_id("pair-first"), tokens=20)
    turn = await client.turn(spec, thread=thread)
    log = next(r for r in await server_log(app.model_url, spec.id) if r.get("t_first_token"))
    return (log["t_request"] - turn.t_send_ns) / 1e6, (turn.first_delta_ns() - log["t_first_token"]) / 1e6


async def compare(apps: dict[str, BenchApp], args) -> dict:
    out = {name: {"streams": [], "request_ms": [], "first_token_ms": []} for name in apps}
    names = list(apps)
    for number in range(args.rounds):
        print(f"round {number + 1}: load average {load_average()}", flush=True)
        results = await asyncio.gather(
            *(
                streams(app, [c for _, c in app.users[1 : args.streams + 1]], args.rate, args.seconds)
                for app in apps.values()
            )
        )
        for name, result in zip(names, results, strict=True):
            out[name]["streams"].append(result)
            print(
                f"  {name:>24}: {args.streams} streams p50 {result['latency_ms']['p50']} ms, "
                f"p99 {result['latency_ms']['p99']} ms, {result['cpu_us_per_token']:.0f} µs CPU/token",
                flush=True,
            )
        clients = {name: await Client(app).__aenter__() for name, app in apps.items()}
        threads = {name: (await clients[name].turn(Spec(id=new_id("warm"), tokens=5))).thread for name in apps}
        for _ in range(args.turns):
            for name in names:
                request, first = await first_token(apps[name], clients[name], threads[name])
                out[name]["request_ms"].append(request)
                out[name]["first_token_ms"].append(first)
        for client in clients.values():
            await client.__aexit__(None, None, None)
    for name in names:
        print(
            f"{name:>24}: message.send → model request median {median(out[name]['request_ms']):.1f} ms, "
            f"first-token latency median {median(out[name]['first_token_ms']):.2f} ms "
            f"({len(out[name]['request_ms'])} turns)"
        )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--streams", type=int, default=10)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=10, help="first-token turns per app per round")
    args = parser.parse_args(argv)
    with bench_model_server() as (model_url, _), BenchApp(model_url, users=args.streams + 1) as app:
        db = app.tmp / "variant.sqlite3"
        for suffix in ("", "-wal", "-shm"):  # the database as SQLite sees it, write-ahead log included
            source = app.db_path.with_name(app.db_path.name + suffix)
            if source.exists():
                shutil.copy(source, db.with_name(db.name + suffix))
        variant = copy.copy(app)
        # The same secret key: the sessions in the copy are signed with it.
        variant.env = {**app.env, "DATABASE_URL": f"sqlite:///{db}"}
        variant.daphne = Daphne(variant.env, app.tmp / "variant.log", args.variant).start()
        try:
            out = asyncio.run(compare({"app": app, args.variant: variant}, args))
        finally:
            variant.daphne.stop()
    print(json.dumps({"args": vars(args), "results": out}), file=sys.stderr)


if __name__ == "__main__":
    main()
