"""A consumer's loop that takes everything waiting on its channel at once.

channels' AsyncConsumer waits on its two sources (the socket, through Daphne, and its channel in the channel layer)
with `await_many_dispatch`: for every message a new task for the next read and an `asyncio.wait` over both, each
costing a few turns of the event loop, and each frame then written to the socket on its own (Twisted registers the
socket for writing, sends, and unregisters it: two system calls and a turn more per frame). A socket that falls
behind its thread's stream, as thousands do in a reconnect storm or beside hundreds of streams, paid all of that
per frame just when the process had least to spare. Here a read of the channel returns the message and every one
waiting behind it (the layer's `receive_many`; a layer without it gives one at a time), and they are dispatched in
one go: Daphne sends their frames to the socket together. A socket that keeps up gets one message a read, as before.
Order, and what a handler raising or StopConsumer does, are channels' own. A consumer that is idle may be handed
a message by the layer without its loop waking at all (delivery/take_now.py; `Dispatcher.idle` says when).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable

from channels.exceptions import StopConsumer

from delivery.adapters.channels import start_consumer


class ReceivesInBatches:
    """Mixed into an AsyncConsumer (before it): channels' `__call__` (its set-up: delivery/adapters/channels.py),
    with the loop below. A consumer with a
    `take_now(message) -> bool` method is offered its channel's messages by the layer while it is idle, if the layer
    can (delivery/take_now.py)."""

    async def __call__(self, scope, receive, send):
        dispatcher = Dispatcher(self.dispatch)
        takes = False
        if await start_consumer(self, scope, send) is None:  # what channels' __call__ sets up first
            receive_batch = None
        else:
            receive_batch = batch_reader(self.channel_layer, self.channel_name)
            take_now = getattr(self, "take_now", None)
            takes = take_now is not None and hasattr(self.channel_layer, "take_now_for")
            if takes:
                self.channel_layer.take_now_for(self.channel_name, dispatcher.taker(take_now))
        try:
            with contextlib.suppress(StopConsumer):  # the consumer's clean exit
                await dispatcher.run(receive, receive_batch)
        finally:
            if takes:
                self.channel_layer.forget_taker(self.channel_name)


def batch_reader(layer, channel: str) -> Callable[[], Awaitable[list[dict]]]:
    many = getattr(layer, "receive_many", None)
    if many is not None:
        return functools.partial(many, channel)

    async def one() -> list[dict]:
        return [await layer.receive(channel)]

    return one


async def dispatch_batches(
    receive: Callable[[], Awaitable[dict]],
    receive_batch: Callable[[], Awaitable[list[dict]]] | None,
    dispatch: Callable[[dict], Awaitable[None]],
) -> None:
    await Dispatcher(dispatch).run(receive, receive_batch)


class Dispatcher:
    """channels' await_many_dispatch for a consumer's two sources, the channel's giving lists of messages.

    Each source is read by a loop of its own that lives as long as the consumer; a lock lets one handler run at a
    time, in the order the messages came, as channels' loop does. (A new read task and an asyncio.wait over both
    sources for every message were half of what a frame cost a socket: docs/performance.md, P22.) The first
    loop to stop, by StopConsumer or an error, stops the other and its exception is raised from `run`."""

    def __init__(self, dispatch: Callable[[dict], Awaitable[None]]):
        self.dispatch = dispatch
        self.turn = asyncio.Lock()
        # Messages taken from either source whose handling has not finished: a handler running, or waiting for the
        # lock. (The lock alone does not say it: released, it is free before the waiter it woke has taken it.)
        self.holding = 0

    @property
    def idle(self) -> bool:
        """No handler runs and none waits to run: what is handled now overtakes nothing."""
        return not self.holding

    def taker(self, take_now: Callable[[dict], bool]) -> Callable[[dict], bool]:
        """`take_now`, called only while this consumer is idle and from its own event loop (delivery/take_now.py)."""
        loop = asyncio.get_running_loop()

        def taker(message: dict) -> bool:
            return not self.holding and asyncio.get_running_loop() is loop and take_now(message)

        return taker

    async def run(
        self,
        receive: Callable[[], Awaitable[dict]],
        receive_batch: Callable[[], Awaitable[list[dict]]] | None,
    ) -> None:
        loops = [asyncio.ensure_future(self.socket_loop(receive))]
        if receive_batch is not None:
            loops.append(asyncio.ensure_future(self.channel_loop(receive_batch)))
        try:
            done, _ = await asyncio.wait(loops, return_when=asyncio.FIRST_COMPLETED)
            for loop in done:
                loop.result()
        finally:
            for loop in loops:
                loop.cancel()
            await asyncio.gather(*loops, return_exceptions=True)  # their reads gone; what ended them was raised above

    async def socket_loop(self, receive: Callable[[], Awaitable[dict]]) -> None:
        while True:
            message = await receive()
            self.holding += 1
            try:
                async with self.turn:
                    await self.dispatch(message)
            finally:
                self.holding -= 1

    async def channel_loop(self, receive_batch: Callable[[], Awaitable[list[dict]]]) -> None:
        while True:
            messages = await receive_batch()
            self.holding += len(messages)
            try:
                async with self.turn:
                    for message in messages:
                        await self.dispatch(message)
            finally:
                self.holding -= len(messages)
