"""Numbered events of a thread, sent to its channel-layer group, with a short backlog for reconnects."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import OrderedDict, deque
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from . import services

_dumps = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(…, ensure_ascii=False) without its set-up
BACKLOG_EVENTS = 5000  # about a minute and a half of one stream at the coalescing window's pace
CHANNELS_KEPT = 1000


def group_name(thread_id: uuid.UUID | str) -> str:
    return f"thread.{thread_id}"


def user_group_name(user_id: int) -> str:
    """Every socket of one person: their other tabs learn of threads created, renamed or deleted."""
    return f"user.{user_id}"


async def tell_user(user_id: int, type_: str, *, news_to_followers: bool = True, **fields: Any) -> None:
    """An event about the person's list of threads, to all their tabs (not numbered: it is not a thread's).
    `news_to_followers` False: not for the sockets that follow the thread already (they know)."""
    text = json.dumps({"type": type_, **fields}, ensure_ascii=False)
    message = {"type": "thread.event", "text": text}
    if not news_to_followers:
        message["unless_following"] = group_name(fields["thread"])
    await get_channel_layer().group_send(user_group_name(user_id), message)


class ThreadChannel:
    """Numbers the events of one thread and broadcasts them, one at a time, in order."""

    def __init__(self, thread_id: uuid.UUID, seq: int):
        self.thread_id = thread_id
        self.seq = seq
        self.lock = asyncio.Lock()
        self.layer = get_channel_layer()
        self.backlog: deque[tuple[int, str]] = deque(maxlen=BACKLOG_EVENTS)
        # Made once rather than for every event (a stream sends dozens of frames a second).
        self._thread = str(thread_id)
        self._group = group_name(thread_id)

    async def emit(self, type_: str, **fields: Any) -> None:
        async with self.lock:
            await self._send(type_, fields)

    async def emit_numbered(self, first_seq: int, events: list[tuple[str, dict[str, Any]]]) -> None:
        """Emit `events` as numbers `first_seq`… that the database reserved (another process may have
        numbered events of this thread since this one last did)."""
        async with self.lock:
            self.resync(first_seq - 1)
            for type_, fields in events:
                await self._send(type_, fields)

    def resync(self, seq: int) -> None:
        """Go on from `seq`; the backlog no longer follows on from it, so it is dropped. Hold the lock."""
        if seq != self.seq:
            self.seq = seq
            self.backlog.clear()

    async def _send(self, type_: str, fields: dict[str, Any]) -> None:
        self.seq += 1
        event = {"type": type_, "thread": self._thread, "seq": self.seq, **fields}
        # Serialised once here rather than once per subscribed socket.
        text = _dumps(event)
        self.backlog.append((self.seq, text))
        await self.layer.group_send(self._group, {"type": "thread.event", "text": text})

    def events_after(self, after_seq: int) -> list[str] | None:
        """The events after `after_seq`, or None when the backlog no longer reaches back that far."""
        if after_seq > self.seq:
            return None  # a number this thread never gave out here (the server restarted): start afresh
        if after_seq == self.seq:
            return []
        if not self.backlog or self.backlog[0][0] > after_seq + 1:
            return None
        return [text for seq, text in self.backlog if seq > after_seq]


_channels: OrderedDict[uuid.UUID, ThreadChannel] = OrderedDict()


async def channel_for(thread_id: uuid.UUID) -> ThreadChannel:
    """The thread's channel in this process, numbering on from the last seq written down."""
    channel = _channels.get(thread_id)
    if channel is None:
        seq = await database_sync_to_async(services.current_seq)(thread_id=thread_id)
        channel = _channels.setdefault(thread_id, ThreadChannel(thread_id, seq))
    _channels.move_to_end(thread_id)
    while len(_channels) > CHANNELS_KEPT:
        oldest_id, oldest = next(iter(_channels.items()))
        if oldest.lock.locked():
            break
        del _channels[oldest_id]
    return channel


def known_channel(thread_id: uuid.UUID) -> ThreadChannel | None:
    return _channels.get(thread_id)
