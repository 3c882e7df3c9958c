"""channels_redis's channel layer, receiving a process's messages many per round trip, and sending a group its
messages in one.

Every socket of a Daphne process has a channel of its own, but channels_redis keeps all of them in one sorted set
per process and reads it one message at a time, each message four round trips to Redis in turn (the backup
script, BZPOPMIN, the backup's ZADD, then the cleaner's ZPOPMIN, which the next read waits for). That one loop is
all a process receives through: beside 200 streams over two processes it fell behind for good, and tokens reached
their sockets 100 s late (docs/performance.md, "Production shape"). Here a read takes every message waiting, up to
`receive_batch`, with one ZPOPMIN; only when none waits does it block as channels_redis does (its BZPOPMIN with the
backup queue). What the layer promises is unchanged: each channel's messages in the order they were sent, none lost
to a cancelled read (the read runs shielded, and what it took is kept for the channels it was for), and the same
capacity, expiry and groups.

Sending to a group was four round trips a message (drop the group's expired members, read them, drop each
process's expired messages, then a script that adds the message); the run's every frame paid them, and the worker
of 200 streams spent most of its CPU there. `group_send_all` sends any number of messages to a group in one round
trip: one script reads the members and adds each message to each process's set, naming that process's members as
channels_redis does (`__asgi_channel__`, a list). The script cannot pack msgpack, so such a message is stored as
`MARK`, the channels, a newline and the message as channels_redis packs it; `deserialize` reads both forms.
With several Redis hosts, or encryption, sending is channels_redis's own.
"""

from __future__ import annotations

import asyncio
import secrets
import time

from channels_redis.core import RedisChannelLayer as ChannelsRedisChannelLayer

#: (channel, message); the channel is a list when one message was sent for several sockets of the process (a group's).
Received = tuple[str | list[str], dict]


#: Follows a message's unique prefix when the message was stored by _GROUP_SEND (msgpack never begins with a 0 byte).
MARK = b"\x00agentweb-group\x00"

# KEYS: the group's set. ARGV: now, the group's expiry, a message's expiry, a process's capacity, the layer's prefix,
# a token unique to this call (8 characters), MARK, then each message as channels_redis packs it without its prefix.
# Each process's members get every message, in order, as long as its set has room; returns how many did not fit.
_GROUP_SEND = r"""
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now - tonumber(ARGV[2]))
local by_key, keys = {}, {}
for _, channel in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local bang = string.find(channel, '!', 1, true)
  local key = ARGV[5] .. (bang and string.sub(channel, 1, bang) or channel)
  if not by_key[key] then
    by_key[key] = {}
    keys[#keys + 1] = key
  end
  table.insert(by_key[key], channel)
end
local over = 0
for _, key in ipairs(keys) do
  redis.call('ZREMRANGEBYSCORE', key, 0, now - tonumber(ARGV[3]))
  local room = tonumber(ARGV[4]) - redis.call('ZCARD', key)
  local head = ARGV[7] .. table.concat(by_key[key], ',') .. '\n'
  for i = 8, #ARGV do
    if room > 0 then
      redis.call('ZADD', key, now, ARGV[6] .. string.format('%04x', i) .. head .. ARGV[i])
      room = room - 1
    else
      over = over + 1
    end
  end
  redis.call('EXPIRE', key, ARGV[3])
end
return over
"""


class RedisChannelLayer(ChannelsRedisChannelLayer):
    def __init__(self, *args, receive_batch: int = 500, **kwargs):
        super().__init__(*args, **kwargs)
        self.receive_batch = receive_batch
        self.prefix_length = kwargs.get("random_prefix_length", 12)
        # The script stores what channels_redis's receive reads only when it alone would have stored it: one host (no
        # sharding of sets), no encryption, a 12-byte unique prefix (the script's token and index).
        self.one_trip = (
            len(self.hosts) == 1 and not kwargs.get("symmetric_encryption_keys") and self.prefix_length == 12
        )

    async def group_send(self, group: str, message: dict) -> None:
        await self.group_send_all(group, [message])

    async def group_send_all(self, group: str, messages: list[dict]) -> None:
        """Send each of `messages` to every member of `group`, in order: one round trip for all of them."""
        if not self.one_trip:
            for message in messages:
                await super().group_send(group, message)
            return
        assert self.require_valid_group_name(group), "Group name not valid"
        packed = [self.serialize(message)[self.prefix_length :] for message in messages]
        args = [time.time(), self.group_expiry, self.expiry, self.capacity, self.prefix, secrets.token_hex(4), MARK]
        connection = self.connection(0)
        await connection.eval(_GROUP_SEND, 1, f"{self.prefix}:group:{group}", *args, *packed)

    def deserialize(self, message: bytes) -> dict:
        body = message[self.prefix_length :]
        if not body.startswith(MARK):
            return super().deserialize(message)
        channels, _, packed = body[len(MARK) :].partition(b"\n")
        decoded = super().deserialize(message[: self.prefix_length] + packed)
        decoded["__asgi_channel__"] = channels.decode().split(",")
        return decoded

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
