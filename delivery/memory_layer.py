"""channels' in-memory channel layer (one process, no Redis) without three costs it pays per message.

Every group_send and every receive walked every channel and group to drop expired messages, each
group_send made a task per member, and each send deep-copied the message. With a thread's events sent
as one pre-serialised string to each of its sockets, these were most of the layer's CPU while many streams
run (docs/performance.md, concurrency). Here expired messages are dropped at most once a second, members
are sent to in turn, and a message whose values are all immutable is copied shallowly. What the layer
does is unchanged: the same expiry, capacity, ChannelFull and groups. Channels' own layer, measured again in its
place, delivered tokens seconds late beside fifty streams (docs/performance.md, "What we keep and why").
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from copy import deepcopy

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer as ChannelsInMemoryChannelLayer

from delivery.take_now import TakesNow

IMMUTABLE = (str, bytes, int, float, bool, type(None))


class InMemoryChannelLayer(TakesNow, ChannelsInMemoryChannelLayer):
    clean_interval = 1.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._next_clean = 0.0

    def _clean_expired(self):
        now = time.monotonic()
        if now < self._next_clean:
            return
        self._next_clean = now + self.clean_interval
        super()._clean_expired()

    async def send(self, channel, message):
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        queue = self.channels.get(channel)
        if (queue is None or queue.empty()) and self.taken_now(channel, message):  # delivery/take_now.py
            return
        if queue is None:
            queue = self.channels.setdefault(channel, self._new_queue(channel))
        copied = dict(message) if all(isinstance(v, IMMUTABLE) for v in message.values()) else deepcopy(message)
        if queue.full():
            raise ChannelFull(channel)
        queue.put_nowait((time.time() + self.expiry, copied))

    async def receive_many(self, channel, most: int = 64) -> list[dict]:
        """The channel's next message and those waiting behind it (up to `most`), oldest first, as
        delivery/redis_layer.py's: a socket behind its stream takes its backlog in one wake-up."""
        taken = [await self.receive(channel)]
        queue = self.channels.get(channel)
        while queue is not None and not queue.empty() and len(taken) < most:
            taken.append(queue.get_nowait()[1])
        if queue is not None and queue.empty():
            self.channels.pop(channel, None)  # as channels' receive leaves it
        return taken

    def _new_queue(self, channel):
        return asyncio.Queue(maxsize=self.get_capacity(channel))

    async def group_send(self, group, message):
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            # A socket too far behind misses the event; it sees the gap in seq and resyncs from a snapshot.
            with contextlib.suppress(ChannelFull):
                await self.send(channel, message)
