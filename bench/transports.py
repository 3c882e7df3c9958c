"""The bare reader (bench/floor.py) through each transport the app can read model servers with, in turns, against one
bench model server: CPU per token for 50 streams at 100 tokens/s (every token its own read, as in `concurrency`)
and for one unpaced stream (as in `relay-max`). What the transport costs, without the rest of the app.

    python -m bench.transports [--rounds 3]

prints one line per transport and round, then the figures as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid

import httpx

from providers.client import TRANSPORTS, new_http_client

from .common import bench_model_server
from .floor import read_stream
from .tokens import Spec

PACED = Spec(tokens=500, rate=100)  # 5 s at 100 tokens/s
UNPACED = Spec(tokens=60_000)


async def cpu_per_token(transport: str, base_url: str, spec: Spec, streams: int) -> float:
    """µs of this process's CPU per token read."""
    async with new_http_client(transport, timeout=httpx.Timeout(300.0)) as client:
        await read_stream(client, base_url, Spec(id=f"warm-{uuid.uuid4().hex[:8]}", tokens=10))
        specs = [Spec(**{**spec.__dict__, "id": f"transport-{uuid.uuid4().hex[:12]}"}) for _ in range(streams)]
        started = time.process_time()
        results = await asyncio.gather(*(read_stream(client, base_url, s) for s in specs))
        cpu = time.process_time() - started
    return cpu * 1e6 / sum(len(r["seqs"]) for r in results)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.transports", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in TRANSPORTS}
    with bench_model_server() as (base_url, _):
        for round_ in range(args.rounds):
            for name in TRANSPORTS:
                paced = asyncio.run(cpu_per_token(name, base_url, PACED, 50))
                unpaced = asyncio.run(cpu_per_token(name, base_url, UNPACED, 1))
                figures[name].append({"paced_us": round(paced, 1), "unpaced_us": round(unpaced, 2)})
                print(f"round {round_ + 1} {name:>9}: 50 × 100 tokens/s {paced:5.1f}, unpaced {unpaced:5.2f} µs/token")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
