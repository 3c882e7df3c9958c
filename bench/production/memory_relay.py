"""The in-memory relay, the floor of the Redis relay: `python -m bench.production.memory_relay --model-url URL
--tokens N --repeat R` serves the app as `make bench` does (one Daphne process, SQLite, the in-memory channel
layer), relays R unpaced streams of N tokens through it and prints one JSON line, one entry per stream."""

from __future__ import annotations

import argparse
import asyncio
import json

from ..app import BenchApp, Client, new_id
from ..relay import one_stream
from ..tokens import Spec


async def relay(app: BenchApp, tokens: int, repeat: int) -> list[dict]:
    async with Client(app) as client:
        await client.turn(Spec(id=new_id("warm"), tokens=200))
        runs = []
        for _ in range(repeat):
            run = await one_stream(app, client, Spec(id=new_id("memory-relay"), tokens=tokens))
            run.pop("latency_us")
            runs.append(run)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-url", required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with BenchApp(args.model_url, users=1) as app:
        print(json.dumps({"runs": asyncio.run(relay(app, args.tokens, args.repeat))}), flush=True)


if __name__ == "__main__":
    main()
