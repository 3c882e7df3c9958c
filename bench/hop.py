"""What one sync_to_async hop costs: the round trip channels' AsyncConsumer.dispatch makes before every message
it hands to a consumer (`await aclose_old_connections()`), and database_sync_to_async makes for every database
call. Measured on an idle event loop, and on one whose thread is busy the way a relaying Daphne is (a task
that computes in slices of `--slice-ms` and yields between them), because the worker thread then waits for
the GIL, which a busy thread gives up only every sys.getswitchinterval() seconds.

    python -m bench.hop [--hops 500] [--slice-ms 2]

prints one JSON line: median and p99 hop time (µs) for each case, and the switch interval.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

from .common import percentile


async def hops(count: int) -> list[float]:
    from channels.db import aclose_old_connections

    out = []
    for _ in range(count):
        started = time.perf_counter_ns()
        await aclose_old_connections()
        out.append((time.perf_counter_ns() - started) / 1000)
    return out


async def busy(stop: asyncio.Event, slice_ms: float) -> None:
    while not stop.is_set():
        end = time.perf_counter() + slice_ms / 1000
        while time.perf_counter() < end:
            pass
        await asyncio.sleep(0)


async def measure(count: int, slice_ms: float) -> dict:
    idle = await hops(count)
    stop = asyncio.Event()
    worker = asyncio.create_task(busy(stop, slice_ms))
    loaded = await hops(count)
    stop.set()
    await worker

    def summary(values):
        return {"median_us": round(percentile(values, 50)), "p99_us": round(percentile(values, 99))}

    return {
        "idle_loop": summary(idle),
        f"loop_busy_in_{slice_ms:g}_ms_slices": summary(loaded),
        "switch_interval_ms": sys.getswitchinterval() * 1000,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hops", type=int, default=500)
    parser.add_argument("--slice-ms", type=float, default=2.0)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")
    import django

    django.setup()
    print(json.dumps(asyncio.run(measure(args.hops, args.slice_ms))))


if __name__ == "__main__":
    main()
