"""The Redis channel layer (agentweb/redis_layer.py) reads a process's waiting messages many at a time and keeps
what channels_redis promises: each channel's messages in order, none lost, none twice. Against the real Redis at
127.0.0.1:6379, under a prefix no other test uses."""

import asyncio
import uuid

import pytest
import redis.asyncio as aioredis

from agentweb.redis_layer import RedisChannelLayer
from tests.support.redis import REDIS_URL, redis_client_or_skip


@pytest.fixture
async def layer():
    await (await redis_client_or_skip()).aclose()
    made = RedisChannelLayer(hosts=[REDIS_URL], prefix=f"agentweb-test-{uuid.uuid4().hex}", receive_batch=7)
    yield made
    await made.flush()
    await made.close_pools()


async def test_many_sockets_of_a_process_get_each_of_their_events_once_and_in_order(layer):
    channels = [await layer.new_channel() for _ in range(5)]
    for channel in channels:
        await layer.group_add("thread.x", channel)
    for n in range(40):
        await layer.group_send("thread.x", {"type": "thread.event", "text": str(n)})

    async def read(channel):
        return [(await layer.receive(channel))["text"] for _ in range(40)]

    got = await asyncio.wait_for(asyncio.gather(*(read(c) for c in channels)), 10)

    assert got == [[str(n) for n in range(40)]] * 5


async def test_a_socket_that_goes_away_mid_read_loses_no_other_sockets_messages(layer):
    leaving, staying = await layer.new_channel(), await layer.new_channel()
    reading = asyncio.ensure_future(layer.receive(leaving))
    await asyncio.sleep(0.2)  # its read holds the process's receive and waits in Redis

    for n in range(10):
        await layer.send(staying, {"type": "x", "n": n})
    reading.cancel()
    got = [(await asyncio.wait_for(layer.receive(staying), 10))["n"] for _ in range(10)]

    assert got == list(range(10))


async def test_a_message_sent_while_nothing_waits_is_received(layer):
    channel = await layer.new_channel()
    later = asyncio.ensure_future(layer.receive(channel))
    await asyncio.sleep(0.2)

    await layer.send(channel, {"type": "x", "text": "late"})

    assert (await asyncio.wait_for(later, 10))["text"] == "late"


async def test_messages_sent_to_a_group_together_arrive_in_order_at_each_member(layer):
    here = [await layer.new_channel() for _ in range(2)]
    elsewhere = RedisChannelLayer(hosts=[REDIS_URL], prefix=layer.prefix)  # another process's sockets
    there = await elsewhere.new_channel()
    for channel in here:
        await layer.group_add("thread.y", channel)
    await layer.group_add("thread.y", there)

    await layer.group_send_all("thread.y", [{"type": "thread.event", "text": str(n)} for n in range(12)])

    for reader, channel in [(layer, here[0]), (layer, here[1]), (elsewhere, there)]:
        got = [(await asyncio.wait_for(reader.receive(channel), 10))["text"] for _ in range(12)]
        assert got == [str(n) for n in range(12)]
    await elsewhere.close_pools()


async def test_a_process_whose_sockets_stopped_reading_misses_what_does_not_fit_and_others_do_not(layer):
    small = RedisChannelLayer(hosts=[REDIS_URL], prefix=layer.prefix, process_capacity=3)
    stuck, reading = await small.new_channel(), await layer.new_channel()
    await small.group_add("thread.z", stuck)
    await small.group_add("thread.z", reading)

    await small.group_send_all("thread.z", [{"type": "x", "n": n} for n in range(5)])

    assert [(await asyncio.wait_for(small.receive(stuck), 10))["n"] for _ in range(3)] == [0, 1, 2]
    assert [(await asyncio.wait_for(layer.receive(reading), 10))["n"] for _ in range(3)] == [0, 1, 2]
    await small.close_pools()


async def test_a_process_set_holds_more_than_one_sockets_capacity(layer):
    """Every socket of a process is sent through one set: 100 sockets' events must not be held to one's capacity."""
    roomy = RedisChannelLayer(hosts=[REDIS_URL], prefix=layer.prefix, capacity=5)
    channels = [await roomy.new_channel() for _ in range(3)]
    for n, channel in enumerate(channels):
        await roomy.group_add(f"thread.{n}", channel)

    for n, _ in enumerate(channels):
        await roomy.group_send_all(f"thread.{n}", [{"type": "x", "n": k} for k in range(4)])

    for channel in channels:
        assert [(await asyncio.wait_for(roomy.receive(channel), 10))["n"] for _ in range(4)] == [0, 1, 2, 3]
    await roomy.close_pools()


async def test_what_comes_for_a_socket_that_went_away_is_not_kept(layer):
    gone, staying = await layer.new_channel(), await layer.new_channel()
    for channel in (gone, staying):
        await layer.group_add("thread.w", channel)
    reading = asyncio.ensure_future(layer.receive(gone))
    await asyncio.sleep(0.1)
    reading.cancel()

    await layer.group_send_all("thread.w", [{"type": "x", "n": n} for n in range(3)])

    assert [(await asyncio.wait_for(layer.receive(staying), 10))["n"] for _ in range(3)] == [0, 1, 2]
    assert gone not in layer.receive_buffer


async def test_thousands_of_sockets_joining_and_leaving_at_once_share_a_connection(layer):
    """channels_redis opened a connection to Redis for each join or leave made while others were in flight: 5,000
    sockets opening at once held 5,000 connections, and those closing waited past Daphne's 10 s."""
    watcher = aioredis.from_url(REDIS_URL)
    channels = [f"specific.elsewhere!{n}" for n in range(2000)]
    clients_before = (await watcher.info("clients"))["connected_clients"]

    await asyncio.gather(*(layer.group_add(f"thread.{n % 10}", channel) for n, channel in enumerate(channels)))
    joined = sum([await watcher.zcard(f"{layer.prefix}:group:thread.{n}") for n in range(10)])
    clients_during = (await watcher.info("clients"))["connected_clients"]
    await asyncio.gather(*(layer.group_discard(f"thread.{n % 10}", channel) for n, channel in enumerate(channels)))
    left = sum([await watcher.zcard(f"{layer.prefix}:group:thread.{n}") for n in range(10)])

    assert (joined, left) == (2000, 0)
    assert clients_during - clients_before <= 5  # other tests' clients may come and go meanwhile
    await watcher.aclose()


async def test_a_socket_behind_its_stream_takes_its_backlog_in_few_reads_in_order(layer):
    channel = await layer.new_channel()
    await layer.group_add("thread.x", channel)
    await layer.group_send_all("thread.x", [{"type": "thread.event", "text": str(n)} for n in range(30)])

    batches = []
    while sum(len(batch) for batch in batches) < 30:
        batches.append(await asyncio.wait_for(layer.receive_many(channel), 10))

    assert [m["text"] for batch in batches for m in batch] == [str(n) for n in range(30)]
    assert len(batches) < 30
