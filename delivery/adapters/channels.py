"""What the delivery relies on inside channels, pinned in requirements.txt and checked by
tests/delivery/adapters/test_channels.py.

- `InMemoryChannelLayer`: channels' in-memory layer (one process, no Redis) without three costs it pays per
  message. Every group_send and every receive walked every channel and group to drop expired messages
  (`_clean_expired`), each group_send made a task per member, and each send deep-copied the message. Here expired
  messages are dropped at most once a second, members are sent to in turn (its `groups`), a message whose values
  are all immutable is copied shallowly, and a read takes what waits behind the message (`receive_many`, from its
  `channels` queues, whose items are (expiry, message)). What the layer does is unchanged: the same expiry,
  capacity, ChannelFull and groups. delivery/memory_layer.py adds take-now (`taken_now`, False here).
  Buys (docs/performance.md, "Library reach-ins measured again", piece 7): fifty streams' Daphne CPU 45 % lower
  (channels' own layer takes a whole core), token p99 2.6 times lower, page p99 68 %, relay-max 29 %.
- `start_consumer`: what channels' `AsyncConsumer.__call__` sets on a consumer before its loop (the attributes its
  handlers read), for delivery/dispatch.py, which replaces that loop. Buys (piece 5): a reconnecting tab's wait and
  a staying stream's pause halved, fifty streams' CPU 19 % lower, one stream's relay 18 % faster.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from copy import deepcopy

from channels import layers
from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer

IMMUTABLE = (str, bytes, int, float, bool, type(None))


async def start_consumer(consumer, scope, send) -> str | None:
    """What channels' AsyncConsumer.__call__ does before it waits on the socket and the channel: the consumer's
    scope, layer, `base_send`, and (with a layer) its channel's name, which is returned, and `channel_receive`."""
    consumer.scope = scope
    consumer.channel_layer = get_channel_layer(consumer.channel_layer_alias)
    consumer.base_send = send
    if consumer.channel_layer is None:
        return None
    consumer.channel_name = await consumer.channel_layer.new_channel()
    consumer.channel_receive = functools.partial(consumer.channel_layer.receive, consumer.channel_name)
    return consumer.channel_name


class InMemoryChannelLayer(layers.InMemoryChannelLayer):
    clean_interval = 1.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.next_clean = 0.0

    def taken_now(self, channel: str, message: dict) -> bool:
        """Whether something took `message` for `channel` without queueing it (delivery/take_now.py): no, here."""
        return False

    def _clean_expired(self):
        now = time.monotonic()
        if now < self.next_clean:
            return
        self.next_clean = now + self.clean_interval
        super()._clean_expired()

    async def send(self, channel, message):
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        queue = self.channels.get(channel)
        if (queue is None or queue.empty()) and self.taken_now(channel, message):  # delivery/take_now.py
            return
        if queue is None:
            queue = self.channels.setdefault(channel, self.new_queue(channel))
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

    def new_queue(self, channel):
        return asyncio.Queue(maxsize=self.get_capacity(channel))

    async def group_send(self, group, message):
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            # A socket too far behind misses the event; it sees the gap in seq and resyncs from a snapshot.
            with contextlib.suppress(ChannelFull):
                await self.send(channel, message)
