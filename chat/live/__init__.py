"""What goes live to the pages: the events of a thread (events.py), numbered and kept by its log (log.py), its
streams' deltas coalesced into few frames (coalesce.py).

`publish(thread, events)` is the one way an event of a thread goes out, from any emitter in any process.
"""

from __future__ import annotations

import asyncio
import uuid

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from .events import Event
from .log import MemoryLog, RedisLog, group_name

__all__ = ["Event", "group_name", "last_seq", "log", "publish", "read_after", "read_from_last"]


def _seed_sync(thread_id: uuid.UUID) -> int:
    from chat.models import Thread

    return Thread.objects.filter(pk=thread_id).values_list("last_seq", flat=True).first() or 0


def _record_sync(thread_id: uuid.UUID, ceiling: int) -> None:
    from chat.models import Thread

    Thread.objects.filter(pk=thread_id, last_seq__lt=ceiling).update(last_seq=ceiling)


_seed = database_sync_to_async(_seed_sync)
_record = database_sync_to_async(_record_sync)

_memory: MemoryLog | None = None
_redis: tuple[asyncio.AbstractEventLoop, RedisLog] | None = None


def log() -> MemoryLog | RedisLog:
    """This process's log: Redis's, shared by every process, when REDIS_URL is set; else its own."""
    global _memory, _redis
    if not settings.REDIS_URL:
        if _memory is None:
            _memory = MemoryLog(_seed, _record)
        return _memory
    loop = asyncio.get_running_loop()
    if _redis is None or _redis[0] is not loop:  # a Redis client belongs to the loop that opened it
        import redis.asyncio as aioredis

        client = aioredis.from_url(settings.REDIS_URL)
        layer = get_channel_layer()
        if getattr(layer, "hosts", None) != [{"address": settings.REDIS_URL}]:
            layer = None  # not agentweb/redis_layer.py's on this Redis: its script cannot send to its groups
        _redis = (loop, RedisLog(client, _seed, _record, prefix=settings.AGENTWEB_REDIS_PREFIX, layer=layer))
    return _redis[1]


async def publish(thread_id: uuid.UUID, events: list[Event]) -> int:
    """Number `events` and send them to every follower of the thread; returns the last number."""
    return await log().publish(thread_id, events)


async def read_after(thread_id: uuid.UUID, seq: int) -> list[str] | None:
    """The thread's events after `seq` as sent, or None when they are not all kept (take a snapshot)."""
    return await log().read_after(thread_id, seq)


async def read_from_last(thread_id: uuid.UUID, event_type: str) -> list[str] | None:
    """The thread's events from the last one of `event_type` its tail holds on, as sent; None when it holds none."""
    return await log().read_from_last(thread_id, event_type)


async def last_seq(thread_id: uuid.UUID) -> int:
    return await log().last_seq(thread_id)
