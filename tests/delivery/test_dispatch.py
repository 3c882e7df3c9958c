"""A consumer's loop (delivery/dispatch.py): what waits on its channel is dispatched together, in order, and the
socket's own messages and a clean stop behave as in channels' loop. With the real in-memory channel layer."""

import asyncio

import pytest
from channels.exceptions import StopConsumer

from delivery.dispatch import Dispatcher, ReceivesInBatches, batch_reader, dispatch_batches
from delivery.memory_layer import InMemoryChannelLayer


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


def holding_on_a_receive(seen: list, release: asyncio.Event):
    """A dispatch that records each message's type, holds a socket's message until `release` (a subscribe awaiting
    the database, say), and stops at "stop"."""

    async def dispatch(message):
        seen.append(message["type"])
        if message["type"] == "websocket.receive":
            await release.wait()
        if message["type"] == "stop":
            raise StopConsumer

    return dispatch


async def test_a_handler_that_waits_holds_back_the_channels_messages_until_it_returns():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    socket, seen, release = Socket(), [], asyncio.Event()
    dispatch = holding_on_a_receive(seen, release)

    socket.queue.put_nowait({"type": "websocket.receive"})
    consumer = asyncio.ensure_future(dispatch_batches(socket.receive, Reads(layer, channel), dispatch))
    await asyncio.sleep(0.01)
    await layer.send(channel, {"type": "thread.event"})
    await layer.send(channel, {"type": "stop"})
    await asyncio.sleep(0.05)
    assert seen == ["websocket.receive"]

    release.set()
    with pytest.raises(StopConsumer):
        await asyncio.wait_for(consumer, 5)
    assert seen == ["websocket.receive", "thread.event", "stop"]


async def test_an_error_in_a_handler_is_raised_and_leaves_no_read_waiting():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "broken"})
    before = asyncio.all_tasks()

    async def dispatch(message):
        raise ValueError(message["type"])

    with pytest.raises(ValueError, match="broken"):
        await asyncio.wait_for(dispatch_batches(Socket().receive, Reads(layer, channel), dispatch), 5)

    assert asyncio.all_tasks() <= before


async def test_a_consumer_cancelled_by_the_server_leaves_no_read_waiting():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    before = asyncio.all_tasks()
    consumer = asyncio.ensure_future(dispatch_batches(Socket().receive, Reads(layer, channel), stopping_at("x", [])))
    await asyncio.sleep(0.01)

    consumer.cancel()  # as Daphne does to an application that outlives its socket
    with pytest.raises(asyncio.CancelledError):
        await consumer

    assert asyncio.all_tasks() <= before


async def test_an_event_offered_while_an_earlier_one_waits_its_turn_is_refused():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    socket, seen, release = Socket(), [], asyncio.Event()
    dispatch = holding_on_a_receive(seen, release)

    dispatcher = Dispatcher(dispatch)
    offered = []
    taker = dispatcher.taker(lambda message: offered.append(message) or True)
    running = asyncio.ensure_future(dispatcher.run(socket.receive, Reads(layer, channel)))
    socket.queue.put_nowait({"type": "websocket.receive"})
    await asyncio.sleep(0.01)
    assert not taker({"type": "thread.event"})  # a handler runs
    await layer.send(channel, {"type": "thread.event"})
    await asyncio.sleep(0.01)  # the channel's loop has it, and waits for the handler's turn

    release.set()
    refused_until_dispatched = []
    while seen.count("thread.event") < 1:
        refused_until_dispatched.append(taker({"type": "thread.event"}))
        await asyncio.sleep(0)

    assert refused_until_dispatched and not any(refused_until_dispatched)
    assert offered == []
    await asyncio.sleep(0)
    assert dispatcher.idle and taker({"type": "thread.event"})  # nothing held: taken
    running.cancel()


@pytest.mark.django_db  # channels closes old database connections around a consumer's handlers
async def test_a_consumer_that_takes_now_is_offered_its_channels_messages_until_it_stops(monkeypatch):
    from channels.consumer import AsyncConsumer

    import delivery.adapters.channels

    taken = []

    class Taking(ReceivesInBatches, AsyncConsumer):
        def take_now(self, message):
            taken.append(message["n"])
            return True

        async def websocket_disconnect(self, message):
            raise StopConsumer

    layer = InMemoryChannelLayer()
    monkeypatch.setattr(delivery.adapters.channels, "get_channel_layer", lambda alias: layer)
    socket, consumer = Socket(), Taking()
    running = asyncio.ensure_future(consumer({"type": "websocket"}, socket.receive, None))
    await asyncio.sleep(0.01)
    await layer.send(consumer.channel_name, {"type": "thread.event", "n": 1})
    socket.queue.put_nowait({"type": "websocket.disconnect"})
    await asyncio.wait_for(running, 5)

    assert taken == [1]
    assert consumer.channel_name not in layer.takers
