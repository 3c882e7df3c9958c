"""channels_redis's channel layer, receiving a process's messages many per round trip.

Every socket of a Daphne process has a channel of its own, but channels_redis keeps all of them in one sorted set
per process and reads it one message at a time, each message four round trips to Redis in turn (the backup
script, BZPOPMIN, the backup's ZADD, then the cleaner's ZPOPMIN, which the next read waits for). That one loop is
all a process receives through: beside 200 streams over two processes it fell behind for good, and tokens reached
their sockets 100 s late (docs/performance.md, "Production shape"). Here a read takes every message waiting, up to
`receive_batch`, with one ZPOPMIN; only when none waits does it block as channels_redis does (its BZPOPMIN with the
backup queue). What the layer promises is unchanged: each channel's messages in the order they were sent, none lost
to a cancelled read (the read runs shielded, and what it took is kept for the channels it was for), and the same
capacity, expiry and groups, which sending still does as channels_redis does.
"""

from __future__ import annotations

import asyncio

from channels_redis.core import RedisChannelLayer as ChannelsRedisChannelLayer

#: (channel, message); the channel is a list when one message was sent for several sockets of the process (a group's).
Received = tuple[str | list[str], dict]


class RedisChannelLayer(ChannelsRedisChannelLayer):
    def __init__(self, *args, receive_batch: int = 500, **kwargs):
        super().__init__(*args, **kwargs)
        self.receive_batch = receive_batch

    async def receive_single(self, channel: str) -> Received:
        if "!" not in channel:  # a channel every process reads (the runs' channel): channels_redis's own way
            return await super().receive_single(channel)
        taking = asyncio.ensure_future(self.take_waiting(channel))
        try:
            batch = await asyncio.shield(taking)
        except asyncio.CancelledError:
            # The socket whose read this was went away; the messages taken belong to the process's other sockets.
            taking.add_done_callback(self.keep_taken)
            raise
        if not batch:
            return await super().receive_single(channel)
        first, *rest = batch
        if rest:
            # channels' receive() buffers the one returned as soon as this returns, without yielding; the rest go in
            # after it (the next turn of the loop, before anything else can read), so each channel keeps its order.
            asyncio.get_running_loop().call_soon(self.buffer, rest)
        return first

    async def take_waiting(self, channel: str) -> list[Received]:
        """Every message waiting on the process's channel (up to receive_batch), oldest first: one round trip."""
        connection = self.connection(self.consistent_hash(channel))
        taken = await connection.zpopmin(self.prefix + channel, self.receive_batch)
        out = []
        for member, _ in taken:
            message = self.deserialize(member)
            out.append((message.pop("__asgi_channel__", channel), message))
        return out

    def buffer(self, received: list[Received]) -> None:
        for channels, message in received:
            for channel in channels if isinstance(channels, list) else (channels,):
                self.receive_buffer[channel].put_nowait(message)

    def keep_taken(self, taking: asyncio.Future) -> None:
        if not taking.cancelled() and taking.exception() is None:
            self.buffer(taking.result())
