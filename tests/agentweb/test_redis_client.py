"""The event log's Redis client (agentweb/redis_client.py): its commands packed by hiredis, byte for byte what
redis-py packs, and answered by the real Redis at 127.0.0.1:6379."""

import uuid

import pytest
from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection

from agentweb.redis_client import client, packing_with_hiredis
from tests.support.redis import REDIS_URL, redis_client_or_skip

# What an event-log script call sends: a script's digest, keys, numbers, JSON halves with any text in them.
ARGUMENTS = [
    ("EVALSHA", "a" * 40, 2, "agentweb:log:1:seq", "agentweb:log:1:events", 0, 5000, 86400),
    ("SET", "k", 'ü — 漢字 "quoted" \\ \n 🤖', b"\x00raw bytes\xff", -7, 2.5),
    ("CONFIG GET", "maxmemory"),
]


@pytest.mark.parametrize("args", ARGUMENTS)
def test_hiredis_packs_a_command_as_redis_py_packs_it(args):
    python_packed = Connection().pack_command(*args)
    hiredis_packed = packing_with_hiredis(Connection)().pack_command(*args)

    assert b"".join(hiredis_packed) == b"".join(python_packed)


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("redis://127.0.0.1:6379/0", Connection),
        ("rediss://127.0.0.1:6380/0", SSLConnection),
        ("unix:///run/redis.sock", UnixDomainSocketConnection),
    ],
)
def test_a_url_keeps_the_connection_kind_it_asks_for(url, kind):
    made = client(url)

    assert issubclass(made.connection_pool.connection_class, kind)


async def test_a_script_call_round_trips_through_redis():
    await (await redis_client_or_skip()).aclose()
    made = client(REDIS_URL)
    key = f"agentweb-test-{uuid.uuid4().hex}"
    text = '{"text": "ü — 漢字 🤖"}'
    try:
        stored = await made.eval("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])", 1, key, text)

        assert stored.decode() == text
    finally:
        await made.delete(key)
        await made.aclose()
