"""What a Daphne process pays to hand a thread's frame to each of its sockets, past Redis and before Twisted: the
process's reader putting one message for many sockets into their queues (delivery/redis_layer.py), each socket's
consumer loop taking it (delivery/dispatch.py) and ChatConsumer.dispatch handing it to the server's send (here a
counter: no autobahn, no socket). `sockets` consumers follow one thread; `frames` frames go to all of them, each
once every consumer had the one before. Prints the process's CPU per frame per socket.

    python -m bench.production.fanout [--sockets 1000] [--frames 200] [--rounds 5]

Nothing is sent to Redis (the reader's round trip is left out). docs/performance.md (P22) quotes it; the reconnect
storm and many-streams measure the same work inside the whole app. Since P25 that is the way of a frame for a
consumer that is busy when it comes; an idle one is handed the frame by the reader (delivery/take_now.py), which
these consumers, with no server's send_now, never are.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")

import django

django.setup()

from chat.consumers import ChatConsumer  # noqa: E402
from delivery.dispatch import batch_reader, dispatch_batches  # noqa: E402
from delivery.redis_layer import RedisChannelLayer  # noqa: E402

REDIS_URL = os.environ.get("AGENTWEB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
FRAME = '{"type":"message.delta","thread":"t","seq":%d,"message":1,"text":"token "}'


async def fanout_bench(sockets: int, frames: int) -> float:
    """CPU µs per frame per socket."""
    layer = RedisChannelLayer(hosts=[REDIS_URL])
    layer.keep_reading = lambda channel: None  # the reader is this function: nothing is read from Redis
    sent = 0
    never = asyncio.get_running_loop().create_future()  # the sockets send nothing

    async def server_send(message: dict) -> None:
        nonlocal sent
        sent += 1

    async def socket_receive() -> dict:
        return await never

    channels, loops = [], []
    for _ in range(sockets):
        consumer = ChatConsumer()
        consumer.groups_joined, consumer.sent_up_to, consumer.base_send = {"thread.t"}, {}, server_send
        channel = await layer.new_channel()
        channels.append(channel)
        loops.append(
            asyncio.ensure_future(dispatch_batches(socket_receive, batch_reader(layer, channel), consumer.dispatch))
        )
    await asyncio.sleep(0.05)
    cpu = time.process_time()
    for n in range(frames):
        layer.buffer([(channels, {"type": "thread.event", "text": FRAME % n})])
        while sent < sockets * (n + 1):
            await asyncio.sleep(0)
    cpu = time.process_time() - cpu
    for loop in loops:
        loop.cancel()
    await asyncio.gather(*loops, return_exceptions=True)
    return cpu * 1e6 / (sockets * frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    figures = [asyncio.run(fanout_bench(args.sockets, args.frames)) for _ in range(args.rounds)]
    print(
        f"{args.sockets} sockets × {args.frames} frames, {args.rounds} rounds: CPU per frame per socket "
        f"median {statistics.median(figures):.1f} µs (least {min(figures):.1f}, most {max(figures):.1f})"
    )


if __name__ == "__main__":
    main()
