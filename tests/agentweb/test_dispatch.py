"""A consumer's loop (agentweb/dispatch.py): what waits on its channel is dispatched together, in order, and the
socket's own messages and a clean stop behave as in channels' loop. With the real in-memory channel layer."""

import asyncio

import pytest
from channels.exceptions import StopConsumer

from agentweb.dispatch import batch_reader, dispatch_batches
from agentweb.layers import InMemoryChannelLayer


class Socket:
    """What Daphne gives a consumer as `receive`: the socket's messages, one a read."""

    def __init__(self):
        self.queue: asyncio.Queue = asyncio.Queue()

    async def receive(self) -> dict:
        return await self.queue.get()


class Reads:
    """A layer's reads of one channel, counted, each giving what it gave."""

    def __init__(self, layer, channel):
        self.read = batch_reader(layer, channel)
        self.batches: list[list[dict]] = []

    async def __call__(self) -> list[dict]:
        batch = await self.read()
        self.batches.append(batch)
        return batch


def stopping_at(kind: str, seen: list[dict]):
    async def dispatch(message):
        seen.append(message)
        if message["type"] == kind:
            raise StopConsumer

    return dispatch


async def test_a_backlog_on_the_channel_is_dispatched_in_order_from_one_read():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    for n in range(5):
        await layer.send(channel, {"type": "thread.event", "n": n})
    await layer.send(channel, {"type": "stop"})
    reads, seen = Reads(layer, channel), []

    with pytest.raises(StopConsumer):
        await asyncio.wait_for(dispatch_batches(Socket().receive, reads, stopping_at("stop", seen)), 5)

    assert [m.get("n") for m in seen] == [0, 1, 2, 3, 4, None]
    assert len(reads.batches) == 1


async def test_a_stop_in_the_middle_of_a_batch_dispatches_nothing_after_it():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    for kind in ("a", "stop", "b"):
        await layer.send(channel, {"type": kind})
    seen = []

    with pytest.raises(StopConsumer):
        await asyncio.wait_for(dispatch_batches(Socket().receive, Reads(layer, channel), stopping_at("stop", seen)), 5)

    assert [m["type"] for m in seen] == ["a", "stop"]


async def test_the_sockets_messages_are_dispatched_while_the_channel_is_quiet():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    socket, seen = Socket(), []
    for kind in ("websocket.receive", "websocket.disconnect"):
        socket.queue.put_nowait({"type": kind})

    with pytest.raises(StopConsumer):
        await asyncio.wait_for(
            dispatch_batches(socket.receive, Reads(layer, channel), stopping_at("websocket.disconnect", seen)), 5
        )

    assert [m["type"] for m in seen] == ["websocket.receive", "websocket.disconnect"]


async def test_the_loop_leaves_no_read_waiting_when_it_stops():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    socket = Socket()
    socket.queue.put_nowait({"type": "websocket.disconnect"})
    before = asyncio.all_tasks()

    with pytest.raises(StopConsumer):
        await asyncio.wait_for(
            dispatch_batches(socket.receive, Reads(layer, channel), stopping_at("websocket.disconnect", [])), 5
        )

    assert asyncio.all_tasks() <= before


async def test_a_layer_without_receive_many_gives_one_message_a_read():
    class OneAtATime:
        def __init__(self):
            self.inner = InMemoryChannelLayer()

        async def receive(self, channel):
            return await self.inner.receive(channel)

    layer = OneAtATime()
    channel = await layer.inner.new_channel()
    for kind in ("a", "b", "stop"):
        await layer.inner.send(channel, {"type": kind})
    reads, seen = Reads(layer, channel), []

    with pytest.raises(StopConsumer):
        await asyncio.wait_for(dispatch_batches(Socket().receive, reads, stopping_at("stop", seen)), 5)

    assert [m["type"] for m in seen] == ["a", "b", "stop"]
    assert [len(batch) for batch in reads.batches] == [1, 1, 1]
