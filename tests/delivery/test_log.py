"""The thread event log's contract, held by both implementations: in memory (one process) and Redis (several).

The Redis one runs against the real Redis at 127.0.0.1:6379, under a key prefix no other test uses.
"""

import asyncio
import json
import uuid

import pytest
from channels.layers import get_channel_layer

from chat.live import events
from delivery.log import MemoryLog, RedisLog, group_name
from delivery.redis_layer import RedisChannelLayer
from tests.support.redis import REDIS_URL, redis_client_or_skip


class Seeds:
    """What the database says each thread's last number is."""

    def __init__(self):
        self.last: dict[uuid.UUID, int] = {}

    async def __call__(self, thread_id):
        return self.last.get(thread_id, 0)

    async def record(self, thread_id, ceiling):
        self.last[thread_id] = max(self.last.get(thread_id, 0), ceiling)


@pytest.fixture
async def redis_client():
    client = await redis_client_or_skip()
    prefix = f"agentweb-test-{uuid.uuid4().hex}"
    yield client, prefix
    keys = [key async for key in client.scan_iter(f"{prefix}:*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.fixture
async def redis_layer(redis_client):
    """delivery/redis_layer.py's channel layer on the test's Redis and prefix, as settings make it with REDIS_URL."""
    _, prefix = redis_client
    layer = RedisChannelLayer(hosts=[REDIS_URL], prefix=prefix)
    yield layer
    await layer.flush()
    await layer.close_pools()


@pytest.fixture(params=["memory", "redis", "redis-one-script"])
def make_log(request):
    """A factory of logs sharing one store: two calls are two processes of one deployment (for Redis), or
    the same process (in memory, where one process is all there is); and the channel layer followers read.
    "redis-one-script": the Redis channel layer on the same Redis, so a publish sends its events in its script."""
    seeds = Seeds()
    if request.param == "memory":
        log = MemoryLog(seeds, seeds.record, keep=5)
        return lambda: log, seeds, get_channel_layer()
    client, prefix = request.getfixturevalue("redis_client")
    if request.param == "redis":
        return lambda: RedisLog(client, seeds, seeds.record, prefix=prefix, keep=5), seeds, get_channel_layer()
    layer = request.getfixturevalue("redis_layer")
    return lambda: RedisLog(client, seeds, seeds.record, prefix=prefix, keep=5, layer=layer), seeds, layer


@pytest.fixture(params=["memory", "redis"])
def restarted_log(request):
    """A log, and one that lost everything it held but the database: the process restarted (in memory), or
    Redis lost its data."""
    seeds = Seeds()
    if request.param == "memory":
        return MemoryLog(seeds, seeds.record), lambda: MemoryLog(seeds, seeds.record)
    client, prefix = request.getfixturevalue("redis_client")
    return (
        RedisLog(client, seeds, seeds.record, prefix=prefix),
        lambda: RedisLog(client, seeds, seeds.record, prefix=f"{prefix}:after"),
    )


def seq_of(text: str) -> int:
    return json.loads(text)["seq"]


def texts_of(found):
    return [json.loads(text) for text in found]


async def test_events_are_numbered_one_by_one_from_the_database_s_last_number(make_log):
    factory, seeds, _ = make_log
    thread = uuid.uuid4()
    seeds.last[thread] = 41
    log = factory()
    assert await log.publish(thread, [events.run_cancelled(1)]) == 42
    assert await log.publish(thread, [events.run_note(1, "a"), events.run_note(1, "b")]) == 44
    assert [e["seq"] for e in texts_of(await log.read_after(thread, 41))] == [42, 43, 44]


async def followed_thread(layer):
    """A new thread, and the channel of a socket that follows it."""
    thread = uuid.uuid4()
    channel = await layer.new_channel()
    await layer.group_add(group_name(thread), channel)
    return thread, channel


async def test_the_tail_holds_the_event_texts_a_follower_was_sent(make_log):
    factory, _, layer = make_log
    thread, channel = await followed_thread(layer)
    log = factory()
    await log.publish(thread, [events.message_delta(7, "héllo"), events.tool_call_cancelled("c1")])
    sent = [(await layer.receive(channel))["text"], (await layer.receive(channel))["text"]]
    assert await log.read_after(thread, 0) == sent
    assert json.loads(sent[0]) == {
        "type": "message.delta",
        "thread": str(thread),
        "seq": 1,
        "message": 7,
        "text": "héllo",
    }


async def test_texts_with_line_breaks_come_back_whole(make_log):
    factory, _, _ = make_log
    thread = uuid.uuid4()
    log = factory()
    texts = ["a poem:\nline one\r\nline two\n", "\n", "\u2028 and \\n"]

    await log.publish(thread, [events.message_delta(7, text) for text in texts])

    assert [e["text"] for e in texts_of(await log.read_after(thread, 0))] == texts


async def test_nothing_after_the_last_number_is_an_empty_tail(make_log):
    factory, _, _ = make_log
    thread = uuid.uuid4()
    log = factory()
    await log.publish(thread, [events.run_cancelled(1)])
    assert await log.read_after(thread, 1) == []


async def test_a_number_never_given_out_asks_for_a_snapshot(make_log):
    factory, _, _ = make_log
    thread = uuid.uuid4()
    log = factory()
    await log.publish(thread, [events.run_cancelled(1)])
    assert await log.read_after(thread, 7) is None


async def test_a_tail_that_no_longer_reaches_back_asks_for_a_snapshot(make_log):
    factory, _, _ = make_log
    thread = uuid.uuid4()
    log = factory()
    for n in range(1, 201):  # keep=5: Redis trims approximately, but never keeps 200
        await log.publish(thread, [events.run_note(1, str(n))])
    assert await log.read_after(thread, 0) is None
    assert [e["text"] for e in texts_of(await log.read_after(thread, 197))] == ["198", "199", "200"]


async def test_a_thread_never_published_asks_for_a_snapshot(make_log):
    factory, _, _ = make_log
    assert await factory().read_after(uuid.uuid4(), 0) is None


async def test_last_seq_is_the_last_number_given_out(make_log):
    factory, seeds, _ = make_log
    thread = uuid.uuid4()
    seeds.last[thread] = 9
    log = factory()
    assert await log.last_seq(thread) == 9
    await log.publish(thread, [events.run_cancelled(1)])
    assert await log.last_seq(thread) == 10


async def test_two_processes_never_give_out_the_same_number(make_log):
    factory, seeds, _ = make_log
    thread = uuid.uuid4()
    seeds.last[thread] = 3
    first, second = factory(), factory()
    numbers = [
        await first.publish(thread, [events.run_note(1, "a")]),
        await second.publish(thread, [events.run_note(1, "b")]),
    ]
    numbers.append(await first.publish(thread, [events.run_note(1, "c")]))
    assert numbers == [4, 5, 6]
    assert [e["text"] for e in texts_of(await second.read_after(thread, 3))] == ["a", "b", "c"]


async def test_redis_that_lost_its_counter_goes_on_after_the_numbers_it_still_holds(redis_client):
    client, prefix = redis_client
    thread = uuid.uuid4()
    log = RedisLog(client, Seeds(), prefix=prefix)
    await log.publish(thread, [events.run_note(1, "a"), events.run_note(1, "b")])
    await client.delete(f"{prefix}:log:{thread}:seq")
    assert await RedisLog(client, Seeds(), prefix=prefix).publish(thread, [events.run_note(1, "c")]) == 3


async def test_a_restarted_log_never_gives_out_a_number_a_tab_has_seen(restarted_log):
    before, restart = restarted_log
    thread = uuid.uuid4()
    seen = await before.publish(thread, [events.run_note(1, "a"), events.run_note(1, "b")])
    after = restart()
    assert await after.publish(thread, [events.run_note(1, "c")]) > seen
    assert await after.read_after(thread, seen) is None  # what came before is gone: a snapshot


async def test_the_tail_from_the_last_event_of_a_type_on(make_log):
    factory, _, _ = make_log
    thread = uuid.uuid4()
    log = factory()
    assert await log.read_from_last(thread, "message.started") is None  # nothing published
    await log.publish(thread, [events.message_started(1), events.message_delta(1, "a")])
    await log.publish(thread, [events.message_started(2), events.message_delta(2, "b"), events.run_note(1, "n")])
    from_last = texts_of(await log.read_from_last(thread, "message.started"))
    assert [(e["type"], e["seq"]) for e in from_last] == [("message.started", 3), ("message.delta", 4), ("run.note", 5)]
    assert texts_of(await log.read_from_last(thread, "run.note")) == from_last[-1:]
    assert await log.read_from_last(thread, "message.completed") is None  # none in the tail
    # keep=5: the last message.started is trimmed away (Redis trims approximately, but never keeps 250)
    await log.publish(thread, [events.message_delta(2, str(n)) for n in range(250)])
    assert await log.read_from_last(thread, "message.started") is None


async def test_followers_in_two_processes_get_every_event_once_in_order_from_publishes_made_together(make_log, request):
    factory, _, layer = make_log
    # "redis": the log's script numbers the events and another channel layer sends them after it, so two processes'
    # sends may cross (agentweb's settings never pair them: with Redis the layer is agentweb's, "redis-one-script").
    in_order = request.node.callspec.params["make_log"] != "redis"
    threads = [uuid.uuid4() for _ in range(3)]
    followers = {}
    for thread in threads:
        followers[thread] = await layer.new_channel()
        await layer.group_add(group_name(thread), followers[thread])
    first, second = factory(), factory()

    await asyncio.gather(
        *(
            log.publish(thread, [events.run_note(1, f"{n}")])
            for n in range(4)
            for thread in threads
            for log in (first, second)
        )
    )

    for thread, channel in followers.items():
        sent = [(await asyncio.wait_for(layer.receive(channel), 10))["text"] for _ in range(8)]
        seqs = [event["seq"] for event in texts_of(sent)]
        assert (seqs if in_order else sorted(seqs)) == list(range(1, 9))
        assert sorted(event["text"] for event in texts_of(sent)) == sorted(f"{n}" for n in range(4) for _ in range(2))
        tail = sent[5:] if in_order else sorted(sent, key=seq_of)[5:]
        assert await second.read_after(thread, 5) == tail  # the tail keeps 5


async def test_publish_later_takes_its_events_when_it_goes_out_after_those_published_before(make_log):
    factory, _, layer = make_log
    thread, follower = await followed_thread(layer)
    log = factory()
    await log.publish(thread, [events.run_note(1, "before")])
    pieces = ["a"]

    later = log.publish_later(thread, lambda: [events.message_delta(7, "".join(pieces))])
    pieces.append("b")  # arrives while the publish waits to go out: it goes with it

    assert await later == 2
    sent = [json.loads((await asyncio.wait_for(layer.receive(follower), 10))["text"]) for _ in range(2)]
    assert [(event["seq"], event["text"]) for event in sent] == [(1, "before"), (2, "ab")]


async def test_publish_later_with_nothing_to_send_numbers_nothing(make_log):
    factory, _, _ = make_log
    thread = uuid.uuid4()
    log = factory()
    await log.publish(thread, [events.run_note(1, "first")])

    assert await log.publish_later(thread, lambda: []) is None
    assert await log.publish(thread, [events.run_note(1, "next")]) == 2


async def test_publish_later_goes_after_the_publishes_already_waiting_their_turn(make_log):
    factory, _, _ = make_log
    thread = uuid.uuid4()
    log = factory()
    await log.publish(thread, [events.run_note(1, "first")])

    # the second waits for the first's answer (a process's publishes to a thread go one at a time, in order)
    waiting = [asyncio.ensure_future(log.publish(thread, [events.run_note(1, text)])) for text in ("a", "b")]
    await asyncio.sleep(0)
    later = log.publish_later(thread, lambda: [events.message_delta(7, "then")])

    assert [await w for w in waiting] + [await later] == [2, 3, 4]
    assert [event.get("text") for event in texts_of(await log.read_after(thread, 0))] == ["first", "a", "b", "then"]
