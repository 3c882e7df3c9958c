"""A Redis script many callers run, the calls made meanwhile sent together (delivery/batched_script.py): each
caller gets its own call's result or error, whatever else went out with it. Against the real Redis at
127.0.0.1:6379."""

import asyncio
import uuid

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError, ResponseError

from delivery.batched_script import BatchedScript
from tests.support.redis import redis_client_or_skip

# Appends ARGV[1] to the list KEYS[1] and returns the list's length; 'bad' is refused.
APPEND = """
if ARGV[1] == 'bad' then return redis.error_reply('bad argument') end
return redis.call('RPUSH', KEYS[1], ARGV[1])
"""


@pytest.fixture
async def client():
    made = await redis_client_or_skip()
    yield made
    await made.aclose()


@pytest.fixture
async def key(client):
    name = f"agentweb-test-{uuid.uuid4().hex}"
    yield name
    await client.delete(name)


async def test_calls_made_together_each_get_their_own_result_in_the_order_made(client, key):
    script = BatchedScript(client, APPEND)

    lengths = await asyncio.gather(*(script([key], [f"v{n}"]) for n in range(60)))

    assert lengths == list(range(1, 61))
    assert await client.lrange(key, 0, -1) == [f"v{n}".encode() for n in range(60)]


async def test_more_calls_than_one_batch_holds_all_go_out(client, key):
    script = BatchedScript(client, APPEND, most=7)

    lengths = await asyncio.gather(*(script([key], [str(n)]) for n in range(30)))

    assert lengths == list(range(1, 31))


async def test_a_refused_call_fails_only_its_caller(client, key):
    script = BatchedScript(client, APPEND)

    results = await asyncio.gather(
        script([key], ["a"]), script([key], ["bad"]), script([key], ["b"]), return_exceptions=True
    )

    assert results[0] == 1 and results[2] == 2
    assert isinstance(results[1], ResponseError) and "bad argument" in str(results[1])


async def test_a_script_redis_no_longer_holds_is_loaded_again(client, key):
    script = BatchedScript(client, APPEND)
    await script([key], ["before"])

    await client.script_flush()  # as after Redis restarted

    assert await asyncio.gather(script([key], ["x"]), script([key], ["y"])) == [2, 3]


async def test_a_cancelled_caller_does_not_take_the_others_results(client, key):
    script = BatchedScript(client, APPEND)
    calls = [asyncio.ensure_future(script([key], [str(n)])) for n in range(3)]
    calls[1].cancel()

    assert await calls[0] == 1
    assert await calls[2] in (2, 3)  # the cancelled call may have been sent already


async def test_redis_out_of_reach_fails_every_waiting_call_with_its_error():
    unreachable = aioredis.from_url("redis://127.0.0.1:9", socket_connect_timeout=2)
    script = BatchedScript(unreachable, APPEND)

    results = await asyncio.wait_for(
        asyncio.gather(*(script(["k"], [str(n)]) for n in range(5)), return_exceptions=True), 30
    )

    assert all(isinstance(result, ConnectionError) for result in results)
    await unreachable.aclose()


async def test_a_call_s_arguments_may_be_made_when_it_goes_out(client, key):
    script = BatchedScript(client, APPEND)
    value = ["made at submit"]

    length = script.submit([key], lambda: [value[0]])
    value[0] = "made when sent"

    assert await length == 1
    assert await client.lrange(key, 0, -1) == [b"made when sent"]


async def test_a_call_with_nothing_to_do_sends_nothing_and_the_next_goes_on(client, key):
    script = BatchedScript(client, APPEND)

    nothing, then = script.submit([key], lambda: None), script.submit([key], ["v"])

    assert (await nothing, await then) == (None, 1)
    assert await client.lrange(key, 0, -1) == [b"v"]


async def test_arguments_that_fail_to_be_made_fail_only_their_caller(client, key):
    script = BatchedScript(client, APPEND)

    def broken():
        raise ValueError("no arguments")

    failed, then = script.submit([key], broken), script.submit([key], ["v"])

    with pytest.raises(ValueError, match="no arguments"):
        await failed
    assert await then == 1
