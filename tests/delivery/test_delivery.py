"""The delivery's one interface, held by both shapes of deployment: a client attached to a thread gets its events,
numbered, and one that comes back reads what it missed; a run's inbox hears what is told to it; the shape is chosen
by whether there is a Redis, once (delivery/__init__.py).

The Redis shape runs against the real Redis at 127.0.0.1:6379, under a key prefix no other test uses.
"""

import asyncio
import json
import uuid

import pytest
import redis.asyncio as aioredis

from chat.live import events
from delivery import Delivery, OneProcess, ThroughRedis, build, group_name, run_group
from delivery.memory_layer import InMemoryChannelLayer
from delivery.redis_layer import RedisChannelLayer
from tests.delivery.test_log import Seeds
from tests.support.redis import REDIS_URL, redis_client_or_skip


def test_the_shape_is_chosen_by_whether_there_is_a_redis():
    seeds = Seeds()
    alone = build(redis_url=None, prefix="p", seed=seeds, record=seeds.record)
    shared = build(redis_url=REDIS_URL, prefix="p", seed=seeds, record=seeds.record)

    assert isinstance(alone, OneProcess) and not alone.shared
    assert isinstance(shared, ThroughRedis) and shared.shared


@pytest.fixture(params=["one-process", "through-redis"])
async def delivery(request):
    """A delivery of each shape, on a channel layer of its own."""
    seeds = Seeds()
    if request.param == "one-process":
        yield OneProcess(seeds, seeds.record, layer=InMemoryChannelLayer())
        return
    client = await redis_client_or_skip()
    await client.aclose()
    prefix = f"agentweb-test-{uuid.uuid4().hex}"
    layer = RedisChannelLayer(hosts=[REDIS_URL], prefix=prefix)
    made = ThroughRedis(seeds, seeds.record, url=REDIS_URL, prefix=prefix, client_for=aioredis.from_url, layer=layer)
    yield made
    await layer.flush()
    await layer.close_pools()
    cleaner = aioredis.from_url(REDIS_URL)
    keys = [key async for key in cleaner.scan_iter(f"{prefix}:*")]
    if keys:
        await cleaner.delete(*keys)
    await cleaner.aclose()


async def receive(delivery: Delivery, address: str) -> dict:
    return await asyncio.wait_for(delivery.receive(address), 5)


async def test_a_client_attached_to_a_thread_gets_its_events_numbered_and_reads_what_it_missed(delivery):
    thread = uuid.uuid4()
    follower = await delivery.new_address()
    await delivery.attach(follower, group_name(thread))

    last = await delivery.publish(thread, [events.run_started(1, "running"), events.run_note(1, "one")])
    await delivery.publish(thread, [events.run_note(1, "two")])

    got = [json.loads((await receive(delivery, follower))["text"]) for _ in range(3)]
    assert [(e["type"], e["seq"]) for e in got] == [("run.started", 1), ("run.note", 2), ("run.note", 3)]
    assert last == 2 and await delivery.last_seq(thread) == 3
    missed = await delivery.read_after(thread, 1)
    assert [json.loads(text)["text"] for text in missed] == ["one", "two"]
    assert [json.loads(text)["seq"] for text in await delivery.read_from_last(thread, "run.started")] == [1, 2, 3]


async def test_a_detached_client_hears_nothing_more(delivery):
    thread = uuid.uuid4()
    gone, staying = await delivery.new_address(), await delivery.new_address()
    for address in (gone, staying):
        await delivery.attach(address, group_name(thread))
    await delivery.detach(gone, group_name(thread))

    await delivery.publish(thread, [events.run_note(1, "after")])

    assert json.loads((await receive(delivery, staying))["text"])["text"] == "after"
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(delivery.receive(gone), 0.3)


async def test_a_runs_inbox_hears_what_is_told_to_it_and_a_reply_reaches_its_sender(delivery):
    thread = uuid.uuid4()
    inbox, sender = await delivery.new_address(), await delivery.new_address()
    await delivery.attach(inbox, run_group(thread))

    await delivery.tell(run_group(thread), {"type": "run.cancel", "run": 7})
    await delivery.send(sender, {"type": "input.refused", "code": "not_found"})

    assert await receive(delivery, inbox) == {"type": "run.cancel", "run": 7}
    assert (await receive(delivery, sender))["code"] == "not_found"
    assert delivery.reachable
