"""The in-memory channel layer (delivery/memory_layer.py) behaves as channels' own, without its per-message costs."""

import asyncio

import pytest
from channels.exceptions import ChannelFull

from delivery.memory_layer import InMemoryChannelLayer


async def test_a_group_send_reaches_every_member_once():
    layer = InMemoryChannelLayer()
    channels = [await layer.new_channel() for _ in range(3)]
    for channel in channels:
        await layer.group_add("thread.x", channel)

    await layer.group_send("thread.x", {"type": "thread.event", "text": "one"})

    assert [await layer.receive(c) for c in channels] == [{"type": "thread.event", "text": "one"}] * 3


async def test_a_full_member_misses_the_event_and_the_others_still_get_it():
    layer = InMemoryChannelLayer(capacity=1)
    full, fine = await layer.new_channel(), await layer.new_channel()
    await layer.send(full, {"type": "x"})
    for channel in (full, fine):
        await layer.group_add("g", channel)

    await layer.group_send("g", {"type": "y"})

    assert await layer.receive(fine) == {"type": "y"}
    assert await layer.receive(full) == {"type": "x"}
    with pytest.raises(ChannelFull):
        await layer.send(fine, {"type": "z"})
        await layer.send(fine, {"type": "z"})


async def test_a_received_message_is_a_copy_of_what_was_sent():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    nested = {"type": "x", "events": [["a", {"b": 1}]]}
    flat = {"type": "x", "text": "t"}

    await layer.send(channel, nested)
    await layer.send(channel, flat)
    nested["events"][0][1]["b"] = 2
    flat["text"] = "changed"

    assert await layer.receive(channel) == {"type": "x", "events": [["a", {"b": 1}]]}
    assert await layer.receive(channel) == {"type": "x", "text": "t"}


async def test_expired_messages_are_still_dropped(monkeypatch):
    layer = InMemoryChannelLayer(expiry=1)
    channel = await layer.new_channel()
    await layer.group_add("g", channel)
    await layer.send(channel, {"type": "old"})

    monkeypatch.setattr("delivery.adapters.channels.time.time", lambda: 10**10)
    layer.next_clean = 0
    layer._clean_expired()

    assert channel not in layer.channels
    assert channel not in layer.groups.get("g", {})


async def test_a_read_of_many_takes_what_waits_in_order_up_to_its_limit():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    for n in range(5):
        await layer.send(channel, {"type": "x", "n": n})

    first = await layer.receive_many(channel, most=3)
    rest = await layer.receive_many(channel, most=3)

    assert [[m["n"] for m in batch] for batch in (first, rest)] == [[0, 1, 2], [3, 4]]


async def test_a_read_of_many_waits_for_the_next_message_when_none_waits():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    reading = asyncio.ensure_future(layer.receive_many(channel))
    await asyncio.sleep(0.05)
    assert not reading.done()

    await layer.send(channel, {"type": "x", "n": 1})

    assert await asyncio.wait_for(reading, 5) == [{"type": "x", "n": 1}]
