"""A consumer's loop that takes everything waiting on its channel at once.

channels' AsyncConsumer waits on its two sources (the socket, through Daphne, and its channel in the channel layer)
with `await_many_dispatch`: for every message a new task for the next read and an `asyncio.wait` over both, each
costing a few turns of the event loop, and each frame then written to the socket on its own (Twisted registers the
socket for writing, sends, and unregisters it: two system calls and a turn more per frame). A socket that falls
behind its thread's stream, as thousands do in a reconnect storm or beside hundreds of streams, paid all of that
per frame just when the process had least to spare. Here a read of the channel returns the message and every one
waiting behind it (the layer's `receive_many`; a layer without it gives one at a time), and they are dispatched in
one go: Daphne sends their frames to the socket together. A socket that keeps up gets one message a read, as before.
Order, and what a handler raising or StopConsumer does, are channels' own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable

from channels.exceptions import StopConsumer
from channels.layers import get_channel_layer


class ReceivesInBatches:
    """Mixed into an AsyncConsumer (before it): channels' `__call__`, with the loop below."""

    async def __call__(self, scope, receive, send):
        self.scope = scope
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.base_send = send
        if self.channel_layer is None:
            receive_batch = None
        else:
            self.channel_name = await self.channel_layer.new_channel()
            self.channel_receive = functools.partial(self.channel_layer.receive, self.channel_name)
            receive_batch = batch_reader(self.channel_layer, self.channel_name)
        with contextlib.suppress(StopConsumer):  # the consumer's clean exit
            await dispatch_batches(receive, receive_batch, self.dispatch)


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
    """channels' await_many_dispatch for a consumer's two sources, the channel's giving lists of messages.

    Each source is read by a loop of its own that lives as long as the consumer; a lock lets one handler run at a
    time, in the order the messages came, as channels' loop does. (A new read task and an asyncio.wait over both
    sources for every message were half of what a frame cost a socket: docs/performance.md, P22.) The first
    loop to stop, by StopConsumer or an error, stops the other and its exception is raised here."""
    turn = asyncio.Lock()

    async def socket_loop() -> None:
        while True:
            message = await receive()
            async with turn:
                await dispatch(message)

    async def channel_loop() -> None:
        while True:
            messages = await receive_batch()
            async with turn:
                for message in messages:
                    await dispatch(message)

    loops = [asyncio.ensure_future(socket_loop())]
    if receive_batch is not None:
        loops.append(asyncio.ensure_future(channel_loop()))
    try:
        done, _ = await asyncio.wait(loops, return_when=asyncio.FIRST_COMPLETED)
        for loop in done:
            loop.result()
    finally:
        for loop in loops:
            loop.cancel()
        await asyncio.gather(*loops, return_exceptions=True)  # their reads gone; what ended them was raised above
