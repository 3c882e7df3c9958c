"""The Redis channel layer (delivery/redis_layer.py) reads a process's waiting messages many at a time and keeps
what channels_redis promises: each channel's messages in order, none lost, none twice. Against the real Redis at
127.0.0.1:6379, under a prefix no other test uses."""

import asyncio
import shutil
import subprocess
import uuid

import pytest
import redis.asyncio as aioredis

from delivery.redis_layer import RedisChannelLayer
from tests.support.production import own_redis
from tests.support.redis import REDIS_URL, redis_client_or_skip

#: The commands a process's reader may read its messages with (Redis 7's BZMPOP, or the older way's).
READING = ("bzmpop", "zpopmin", "bzpopmin", "eval")


@pytest.fixture
async def layer():
    await (await redis_client_or_skip()).aclose()
    made = RedisChannelLayer(hosts=[REDIS_URL], prefix=f"agentweb-test-{uuid.uuid4().hex}", receive_batch=7)
    yield made
    await made.flush()
    await made.close_pools()


async def reads_so_far(client: aioredis.Redis) -> dict[str, int]:
    stats = await client.info("commandstats")
    return {name: stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in READING}


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


async def test_a_message_that_comes_while_nothing_waits_is_read_in_one_command(layer):
    """channels_redis read it in five (a ZPOPMIN finding nothing, its backup script, BZPOPMIN, the backup's ZADD and
    the cleaner's ZPOPMIN): beside few streams, or none, that was every message a process received."""
    watcher = aioredis.from_url(REDIS_URL)
    channel = await layer.new_channel()
    reading = asyncio.ensure_future(layer.receive(channel))
    await asyncio.sleep(0.2)  # the process's reader waits in Redis
    before = await reads_so_far(watcher)

    for n in range(5):
        await layer.send(channel, {"type": "x", "n": n})
        assert (await asyncio.wait_for(reading, 10))["n"] == n
        reading = asyncio.ensure_future(layer.receive(channel))
        await asyncio.sleep(0.05)
    after = await reads_so_far(watcher)

    assert {name: after[name] - before[name] for name in READING} == {
        "bzmpop": 5,
        "zpopmin": 0,
        "bzpopmin": 0,
        "eval": 0,
    }
    reading.cancel()
    await watcher.aclose()


@pytest.fixture
async def redis_before_7():
    """A real Redis of its own that does not know BZMPOP (renamed away), as Redis 6 does not."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("no redis-server to start")
    socket = f"/tmp/agentweb-test-redis-{uuid.uuid4().hex[:8]}.sock"
    process = subprocess.Popen(
        [
            server,
            "--port",
            "0",
            "--unixsocket",
            socket,
            "--save",
            "",
            "--appendonly",
            "no",
            "--rename-command",
            "BZMPOP",
            "",
        ],
        stdout=subprocess.DEVNULL,
    )
    url = f"unix://{socket}"
    client = aioredis.from_url(url)
    for _ in range(100):
        try:
            await client.ping()
            break
        except Exception:
            await asyncio.sleep(0.05)
    yield url
    await client.aclose()
    process.terminate()
    process.wait(10)


async def test_on_a_redis_without_bzmpop_every_message_still_arrives_in_order(redis_before_7):
    layer = RedisChannelLayer(hosts=[redis_before_7], prefix="agentweb-test")
    channels = [await layer.new_channel() for _ in range(3)]
    for channel in channels:
        await layer.group_add("thread.x", channel)
    late = asyncio.ensure_future(layer.receive(channels[0]))
    await asyncio.sleep(0.2)  # the reader has found BZMPOP missing and waits the older way

    for n in range(20):
        await layer.group_send("thread.x", {"type": "thread.event", "text": str(n)})

    async def read(channel, first=None):
        got = [first] if first else []
        while len(got) < 20:
            got.append(await layer.receive(channel))
        return [m["text"] for m in got]

    got = await asyncio.wait_for(asyncio.gather(read(channels[0], await late), *(read(c) for c in channels[1:])), 10)
    assert got == [[str(n) for n in range(20)]] * 3
    assert not layer.blocking_pop_many
    await layer.close_pools()


async def test_a_burst_on_a_channel_every_worker_reads_arrives_in_order_in_a_few_commands(layer):
    """The runs' channel (chat/worker.py): channels_redis read it one message at a time, four commands each (its
    backup script, BZPOPMIN, the backup's ZADD, the cleaner's ZPOPMIN), each waiting its turn on a busy worker."""
    watcher = aioredis.from_url(REDIS_URL)
    before = await reads_so_far(watcher)
    for n in range(40):
        await layer.send("runs-test", {"type": "run.launch", "n": n})

    got = [(await asyncio.wait_for(layer.receive("runs-test"), 10))["n"] for _ in range(40)]
    after = await reads_so_far(watcher)

    assert got == list(range(40))
    assert {name: after[name] - before[name] for name in READING} == {
        "bzmpop": 3,  # 16 + 16 + 8 (shared_receive_batch)
        "zpopmin": 0,
        "bzpopmin": 0,
        "eval": 0,
    }
    await watcher.aclose()


async def test_two_workers_reading_one_channel_take_each_message_once(layer):
    other = RedisChannelLayer(hosts=[REDIS_URL], prefix=layer.prefix)
    for n in range(50):
        await layer.send("runs-test", {"type": "run.launch", "n": n})

    first = (await asyncio.wait_for(layer.receive("runs-test"), 10))["n"]  # this worker takes 0-15
    seconds = [(await asyncio.wait_for(other.receive("runs-test"), 10))["n"] for _ in range(34)]
    firsts = [first] + [(await asyncio.wait_for(layer.receive("runs-test"), 10))["n"] for _ in range(15)]

    assert firsts == list(range(16))
    assert seconds == list(range(16, 50))
    await other.close_pools()


async def test_a_message_on_a_channel_every_worker_reads_waits_for_its_reader(layer):
    reading = asyncio.ensure_future(layer.receive("runs-test"))
    await asyncio.sleep(0.2)  # the read waits in Redis
    assert not reading.done()

    await layer.send("runs-test", {"type": "run.launch", "n": 1})

    assert (await asyncio.wait_for(reading, 10))["n"] == 1


async def test_on_a_redis_without_bzmpop_a_channel_every_worker_reads_still_arrives_in_order(redis_before_7):
    layer = RedisChannelLayer(hosts=[redis_before_7], prefix="agentweb-test")
    for n in range(20):
        await layer.send("runs-test", {"type": "run.launch", "n": n})

    got = [(await asyncio.wait_for(layer.receive("runs-test"), 10))["n"] for _ in range(20)]

    assert got == list(range(20))
    assert not layer.blocking_pop_many
    await layer.close_pools()


@pytest.fixture
def restartable_redis(tmp_path):
    """A Redis server of the test's own that it may kill and start again, empty, on the same port."""
    with own_redis(tmp_path) as server:
        yield server


async def test_a_channel_every_worker_reads_waits_out_a_redis_restart(restartable_redis):
    """A worker's read of the runs' channel rides out Redis going away (channels' runworker ends when it raises), and
    takes what is sent once Redis is back."""
    layer = RedisChannelLayer(hosts=[restartable_redis.url], prefix="agentweb-test")
    reading = asyncio.ensure_future(layer.receive("agentweb-runs"))
    await asyncio.sleep(0.3)  # the read waits in Redis
    restartable_redis.kill()
    await asyncio.sleep(1)
    restartable_redis.start()
    await asyncio.sleep(0.5)
    assert not reading.done()
    await layer.send("agentweb-runs", {"type": "run.launch", "run": 1})
    try:
        assert (await asyncio.wait_for(reading, 15))["run"] == 1
    finally:
        await layer.close_pools()


async def test_a_socket_still_hears_its_group_after_redis_restarted_empty(restartable_redis):
    """Redis restarted without its data has lost every group: the process joins its sockets' groups again before it
    reads again, and a socket hears what is sent to its thread afterwards."""
    layer = RedisChannelLayer(hosts=[restartable_redis.url], prefix="agentweb-test")
    sender = RedisChannelLayer(hosts=[restartable_redis.url], prefix="agentweb-test")  # another process
    socket = await layer.new_channel()
    await layer.group_add("thread.x", socket)
    reading = asyncio.ensure_future(layer.receive(socket))
    await asyncio.sleep(0.3)
    restartable_redis.kill()
    await asyncio.sleep(1)
    restartable_redis.start()
    await asyncio.sleep(6)  # the reader's next try (its backoff is at most 5 s)
    await sender.group_send("thread.x", {"type": "thread.event", "text": "after"})
    try:
        assert (await asyncio.wait_for(reading, 15))["text"] == "after"
    finally:
        await layer.close_pools()
        await sender.close_pools()
