"""What goes live to the pages: the events of a thread (events.py, one typed builder per protocol event; views.py,
the shapes they carry), and its streams' deltas coalesced into few frames (coalesce.py). They go out through the
deployment's delivery (the `delivery` package): built once when the app starts (chat/apps.py), it numbers them,
keeps the thread's tail and sends them to every follower, in any process.

`publish(thread, events)` is the one way an event of a thread goes out, from any emitter in any process.
"""

from __future__ import annotations

import uuid

from channels.db import database_sync_to_async
from django.apps import apps

from delivery import Delivery, build, group_name

from .events import Event

__all__ = ["Event", "delivery", "group_name", "last_seq", "publish", "read_after", "read_from_last", "start"]


def _seed_sync(thread_id: uuid.UUID) -> int:
    Thread = apps.get_model("chat", "Thread")
    return Thread.objects.filter(pk=thread_id).values_list("last_seq", flat=True).first() or 0


def _record_sync(thread_id: uuid.UUID, ceiling: int) -> None:
    Thread = apps.get_model("chat", "Thread")
    Thread.objects.filter(pk=thread_id, last_seq__lt=ceiling).update(last_seq=ceiling)


def start(settings) -> Delivery:
    """The deployment's delivery, numbering each thread's events from its `Thread.last_seq` (the ceiling no event has
    reached yet: delivery/log.py): called once, by chat/apps.py, as the app starts."""
    return build(
        redis_url=settings.REDIS_URL,
        prefix=settings.AGENTWEB_REDIS_PREFIX,
        seed=database_sync_to_async(_seed_sync),
        record=database_sync_to_async(_record_sync),
    )


def delivery() -> Delivery:
    """The delivery the app started with (chat/apps.py)."""
    return apps.get_app_config("chat").delivery


async def publish(thread_id: uuid.UUID, events: list[Event]) -> int:
    """Number `events` and send them to every follower of the thread; returns the last number."""
    return await delivery().publish(thread_id, events)


async def read_after(thread_id: uuid.UUID, seq: int) -> list[str] | None:
    """The thread's events after `seq` as sent, or None when they are not all kept (take a snapshot)."""
    return await delivery().read_after(thread_id, seq)


async def read_from_last(thread_id: uuid.UUID, event_type: str) -> list[str] | None:
    """The thread's events from the last one of `event_type` its tail holds on, as sent; None when it holds none."""
    return await delivery().read_from_last(thread_id, event_type)


async def last_seq(thread_id: uuid.UUID) -> int:
    return await delivery().last_seq(thread_id)
