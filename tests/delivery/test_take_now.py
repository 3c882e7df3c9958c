"""A channel layer offers an idle consumer its message before queueing it (delivery/take_now.py): with both of
agentweb's layers, the in-memory one and the Redis one against the real Redis."""

import asyncio
import uuid

import pytest

from delivery.memory_layer import InMemoryChannelLayer
from delivery.redis_layer import RedisChannelLayer
from tests.support.redis import REDIS_URL, redis_client_or_skip


@pytest.fixture(params=["memory", "redis"])
async def layer(request):
    if request.param == "memory":
        yield InMemoryChannelLayer()
        return
    await (await redis_client_or_skip()).aclose()
    made = RedisChannelLayer(hosts=[REDIS_URL], prefix=f"agentweb-test-{uuid.uuid4().hex}")
    yield made
    await made.flush()
    await made.close_pools()


class Taker:
    """A consumer's taker: takes what it is offered while `willing`, and remembers it."""

    def __init__(self, willing: bool = True):
        self.willing = willing
        self.taken: list[str] = []

    def __call__(self, message: dict) -> bool:
        if self.willing:
            self.taken.append(message["text"])
        return self.willing


async def until(condition, seconds: float = 5) -> None:
    for _ in range(int(seconds * 100)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within 5 s")


def event(text: str) -> dict:
    return {"type": "thread.event", "text": text}


async def test_a_message_for_an_idle_consumer_is_taken_and_never_queued(layer):
    channel = await layer.new_channel()
    await layer.group_add("thread.x", channel)
    taker = Taker()
    layer.take_now_for(channel, taker)
    waiting = asyncio.ensure_future(layer.receive(channel))  # the consumer waits on its channel

    await layer.group_send("thread.x", event("one"))
    await until(lambda: taker.taken)
    await asyncio.sleep(0.05)

    assert taker.taken == ["one"]
    assert not waiting.done()  # its read never got it
    waiting.cancel()


async def test_a_message_the_taker_refuses_is_queued_and_received(layer):
    channel = await layer.new_channel()
    await layer.group_add("thread.x", channel)
    layer.take_now_for(channel, Taker(willing=False))

    await layer.group_send("thread.x", event("one"))

    assert await asyncio.wait_for(layer.receive(channel), 5) == event("one")


async def test_a_message_behind_a_queued_one_is_queued_too_in_order(layer):
    channel, other = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("thread.x", channel)
    taker = Taker(willing=False)
    layer.take_now_for(channel, taker)
    reading = asyncio.ensure_future(layer.receive(other))  # the process reads (for another socket) meanwhile
    await layer.group_send("thread.x", event("one"))
    await asyncio.sleep(0.1)  # "one" waits in the channel's queue, its consumer busy
    taker.willing = True

    await layer.group_send("thread.x", event("two"))
    await asyncio.sleep(0.1)

    assert taker.taken == []  # "two" would have overtaken "one"
    assert [(await asyncio.wait_for(layer.receive(channel), 5))["text"] for _ in range(2)] == ["one", "two"]
    reading.cancel()


async def test_a_forgotten_taker_is_offered_nothing_more(layer):
    channel = await layer.new_channel()
    await layer.group_add("thread.x", channel)
    taker = Taker()
    layer.take_now_for(channel, taker)
    layer.forget_taker(channel)

    await layer.group_send("thread.x", event("one"))

    assert await asyncio.wait_for(layer.receive(channel), 5) == event("one")
    assert taker.taken == []
