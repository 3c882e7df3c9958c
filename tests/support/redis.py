"""The local Redis that the tests of Redis-backed parts use (127.0.0.1:6379), or a skip that says it is not there."""

import pytest
import redis.asyncio as aioredis

REDIS_URL = "redis://127.0.0.1:6379/0"


async def redis_client_or_skip() -> aioredis.Redis:
    client = aioredis.from_url(REDIS_URL)
    try:
        await client.ping()
    except Exception:
        await client.aclose()
        pytest.skip("no Redis at 127.0.0.1:6379")
    return client
