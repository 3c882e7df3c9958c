"""A tab that subscribes while a run streams: it misses nothing and gets nothing twice (docs/protocol.md, "Ordering
and seq"; the thread's log is chat/live/log.py)."""

import pytest

from chat.models import Message

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_tab_subscribing_mid_stream_gets_every_later_event_once_after_its_snapshot(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.005
    first = await connect(owner)
    await first.ask("hello there, tell me something")
    opening = await first.until("message.delta")
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=opening[0]["thread"], after_seq=None)
    snapshot = await second.receive()
    later = await second.run_to_end()

    assert snapshot["type"] == "thread.snapshot"
    assert [e["seq"] for e in later] == list(range(snapshot["seq"] + 1, snapshot["seq"] + 1 + len(later)))
    answer = snapshot["messages"][-1]
    streamed = answer["content"] + "".join(e["text"] for e in later if e["type"] == "message.delta")
    completed = [e for e in later if e["type"] == "message.completed"][-1]
    assert streamed == completed["content"]


async def test_a_tab_resubscribing_mid_stream_gets_the_events_it_missed_once(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.005
    first = await connect(owner)
    await first.ask("hello there, tell me something")
    seen = await first.until("message.delta")
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=seen[0]["thread"], after_seq=seen[-1]["seq"])
    later = await second.run_to_end()

    assert [e["seq"] for e in later] == list(range(seen[-1]["seq"] + 1, seen[-1]["seq"] + 1 + len(later)))
    assert later == [e for e in await first.run_to_end() if e["seq"] > seen[-1]["seq"]]


async def test_a_tab_subscribing_mid_stream_does_not_make_the_run_write_its_text(connect, owner, settings):
    """The snapshot lays the run's own state over the database's: the stream is not held up by a write."""
    settings.AGENTWEB_DEMO_DELAY = 0.005
    first = await connect(owner)
    await first.ask("hello there, tell me something")
    opening = await first.until("message.delta")
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=opening[0]["thread"], after_seq=None)
    snapshot = await second.receive()

    streaming = snapshot["messages"][-1]
    assert streaming["status"] == "streaming" and streaming["content"]
    stored = await Message.objects.aget(pk=streaming["id"])
    assert (stored.status, stored.content) == ("streaming", "")
    await first.run_to_end()
