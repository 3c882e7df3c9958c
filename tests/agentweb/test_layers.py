"""The in-memory channel layer (agentweb/layers.py) behaves as channels' own, without its per-message costs."""

import pytest
from channels.exceptions import ChannelFull

from agentweb.layers import InMemoryChannelLayer


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

    monkeypatch.setattr("agentweb.layers.time.time", lambda: 10**10)
    layer._next_clean = 0
    layer._clean_expired()

    assert channel not in layer.channels
    assert channel not in layer.groups.get("g", {})
