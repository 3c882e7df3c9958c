"""api/openai_run.py `open_run`: a completion's turn is either not written at all or its run launched. When the
thread cannot be followed after the turn is written (Redis gone just then), the run still goes on, as a closed tab's
does, and the client is told which thread holds it; when Redis is out of reach before, nothing is written."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from redis.exceptions import ConnectionError as RedisConnectionError

from api.follow import Following
from api.models import ApiKey
from api.openai_format import Refused, parse_request
from api.openai_run import open_run
from chat import live
from chat.models import Run, Thread

pytestmark = pytest.mark.django_db(transaction=True)


def asked(content: str):
    body = json.dumps({"model": "model:default", "messages": [{"role": "user", "content": content}]}).encode()
    return parse_request(body, "application/json", max_messages=10)


async def settled(thread: Thread, seconds: float = 10.0) -> Run:
    """The thread's run once it is no longer running."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        run = await Run.objects.filter(thread=thread).aget()
        if run.status != Run.Status.RUNNING or loop.time() > deadline:
            return run
        await asyncio.sleep(0.05)


async def test_a_thread_that_cannot_be_followed_after_the_turn_is_written_still_gets_its_run(owner, monkeypatch):
    key, _ = await sync_to_async(ApiKey.issue)(owner, "script")
    key = await ApiKey.objects.select_related("user").aget(pk=key.pk)

    async def redis_gone(self):
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(Following, "open", redis_gone)
    with pytest.raises(Refused) as refused:
        await open_run(key, asked("hello"))

    thread = await Thread.objects.aget(owner=owner)
    assert refused.value.status == 503 and refused.value.code == "unavailable"
    assert str(thread.pk) in refused.value.message  # where the run goes on
    run = await settled(thread)
    assert run.status == Run.Status.COMPLETED  # launched: the demo model answered, no stale recovery needed


async def test_with_redis_out_of_reach_before_the_turn_nothing_is_written(owner, monkeypatch):
    key, _ = await sync_to_async(ApiKey.issue)(owner, "script")
    key = await ApiKey.objects.select_related("user").aget(pk=key.pk)
    monkeypatch.setattr(live.delivery().layer, "out_of_reach", True, raising=False)

    with pytest.raises(Refused) as refused:
        await open_run(key, asked("hello"))

    assert refused.value.status == 503 and refused.value.code == "unavailable"
    assert not await Thread.objects.filter(owner=owner).aexists()
