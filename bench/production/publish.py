"""What a run worker pays to publish a frame: the event log and the Redis channel layer alone, without a model,
a run or a socket. `threads` threads each publish one message.delta every 20 ms (a stream at 50 tokens/s, one
token a frame) for `seconds`; each thread's group has one member in each of two processes whose sets are emptied
as they fill. Prints the publishes done against those asked and the process's CPU per publish.

    python -m bench.production.publish [--threads 200] [--seconds 8]

Redis from AGENTWEB_TEST_REDIS_URL (loopback by default), under a prefix of its own that it deletes afterwards.
docs/performance.md (P10) quotes it; many-streams measures the same work inside the whole app.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid

import redis.asyncio as aioredis

from delivery.log import RedisLog, group_name
from delivery.redis_layer import RedisChannelLayer

REDIS_URL = os.environ.get("AGENTWEB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
FRAME_S = 0.02


async def no_seed(thread_id: uuid.UUID) -> int:
    return 0


async def publish_bench(threads: int, seconds: float) -> dict:
    prefix = f"agentweb-bench-{uuid.uuid4().hex[:8]}"
    client = aioredis.from_url(REDIS_URL)
    layer = RedisChannelLayer(hosts=[REDIS_URL], prefix=prefix)
    log = RedisLog(client, no_seed, prefix=prefix, layer=layer)
    ids = [uuid.uuid4() for _ in range(threads)]
    for n, thread in enumerate(ids):
        await layer.group_add(group_name(thread), f"specific.p{n % 2}!s{n}")
    done = 0
    stop = time.monotonic() + seconds

    async def stream(thread: uuid.UUID) -> None:
        nonlocal done
        due = time.monotonic()
        while time.monotonic() < stop:
            await log.publish(thread, [("message.delta", {"message": 1, "text": "token "})])
            done += 1
            due += FRAME_S
            await asyncio.sleep(max(0.0, due - time.monotonic()))

    async def empty_sets() -> None:  # the two processes' sets, as their readers would
        while time.monotonic() < stop:
            await client.delete(f"{prefix}specific.p0!", f"{prefix}specific.p1!")
            await asyncio.sleep(0.2)

    cpu, wall = time.process_time(), time.monotonic()
    emptying = asyncio.ensure_future(empty_sets())
    await asyncio.gather(*(stream(thread) for thread in ids))
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    await emptying
    keys = [key async for key in client.scan_iter(f"{prefix}*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()
    await layer.close_pools()
    return {
        "publishes": done,
        "asked": int(threads * seconds / FRAME_S),
        "per_second": done / wall,
        "cpu_us_per_publish": cpu * 1e6 / done,
        "cpu_share": cpu / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    found = asyncio.run(publish_bench(args.threads, args.seconds))
    print(
        f"{args.threads} threads × 50 frames/s: {found['publishes']:,} of {found['asked']:,} publishes "
        f"({found['per_second']:,.0f}/s), {found['cpu_us_per_publish']:.0f} µs of CPU each, "
        f"{found['cpu_share']:.0%} of a core"
    )


if __name__ == "__main__":
    main()
