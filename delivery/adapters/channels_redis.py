"""What the delivery relies on inside channels_redis's channel layer, pinned in requirements.txt and checked by
tests/delivery/adapters/test_channels_redis.py.

- Its storage format: a process's messages are members of one sorted set (prefix + the process's channel), each a
  unique prefix of `random_prefix_length` bytes then the msgpack of the message, `__asgi_channel__` naming the
  socket(s); a group is a sorted set of its members scored by the time they joined. The scripts here (DELIVER_LUA,
  GROUP_SEND_LUA, GROUP_ADD_LUA, GROUP_DISCARD_LUA; delivery/log.py's publish includes DELIVER_LUA) write them so, and
  `deserialize` reads what they wrote (MARK).
- `RedisChannelLayer`: channels_redis's layer with the reads that touch its internals: the process's messages put in
  each socket's queue (its `receive_buffer`), read many per round trip (`consistent_hash`, `connection`), its own
  one-message read when Redis has no BZMPOP (`receive_single`). delivery/redis_layer.py builds the process's reader,
  the shared channel's reads, group sends and joins on these, and take-now (`taken_now`, False here).

Buys (docs/performance.md, "Library reach-ins measured again", piece 8): without it 16 to 55 % of many-streams'
tokens were lost and the rest 47 to 84 s late, every resuming tab missed events, CPU per frame 4 to 5 times.
"""

from __future__ import annotations

import asyncio
import random

from channels_redis.core import RedisChannelLayer as ChannelsRedisChannelLayer

#: (channel, message); the channel is a list when one message was sent for several sockets of the process (a group's).
Received = tuple[str | list[str], dict]


#: Follows a message's unique prefix when the message was stored by GROUP_SEND_LUA (msgpack never begins with a 0 byte).
MARK = b"\x00agentweb-group\x00"

# deliver(): adds each of `messages` (packed as channels_redis packs them, without its prefix) to the set of every
# process with a member in the group whose set is `group_key`, naming that process's members, as long as the set has
# room; returns how many did not fit. The expiries are in seconds; `token` is unique to the call (8 characters) and
# the message's index follows it, so that two equal messages are two members of the set. A message's score is
# Redis's own time, and always above the highest in the set: a process reads its set in order of score, so every
# socket gets a group's messages in the order the scripts ran, whichever process sent them and whatever its clock
# says (a time each process passed would let a script that ran later slot its messages in before). The event log's
# script includes deliver() to number, keep and send a thread's events in one round trip (delivery/log.py).
DELIVER_LUA = r"""
local function deliver(group_key, group_expiry, expiry, capacity, prefix, token, mark, messages)
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000000 + tonumber(time[2])  -- in microseconds: exact as a Lua number
  redis.call('ZREMRANGEBYSCORE', group_key, 0, (now / 1000000) - tonumber(group_expiry))
  local by_key, keys = {}, {}
  for _, channel in ipairs(redis.call('ZRANGE', group_key, 0, -1)) do
    local bang = string.find(channel, '!', 1, true)
    local key = prefix .. (bang and string.sub(channel, 1, bang) or channel)
    if not by_key[key] then
      by_key[key] = {}
      keys[#keys + 1] = key
    end
    table.insert(by_key[key], channel)
  end
  local over = 0
  for _, key in ipairs(keys) do
    redis.call('ZREMRANGEBYSCORE', key, 0, (now / 1000000) - tonumber(expiry))
    local room = tonumber(capacity) - redis.call('ZCARD', key)
    local head = mark .. table.concat(by_key[key], ',') .. '\n'
    local score = now
    local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]
    if top then score = math.max(score, math.floor(tonumber(top) * 1000000 + 0.5) + 1) end
    for i, message in ipairs(messages) do
      if room > 0 then
        local at = string.format('%d.%06d', math.floor(score / 1000000), score % 1000000)
        redis.call('ZADD', key, at, token .. string.format('%04x', i) .. head .. message)
        room = room - 1
        score = score + 1
      else
        over = over + 1
      end
    end
    redis.call('EXPIRE', key, expiry)
  end
  return over
end
"""
#: The most messages one call of deliver() takes (its index is 4 hex digits of the unique prefix).
DELIVER_MOST = 0xFFFF

# KEYS: the group's set. ARGV: deliver()'s arguments from `group_expiry` to `mark`, then each message.
GROUP_SEND_LUA = (
    DELIVER_LUA
    + r"""
local messages = {}
for i = 7, #ARGV do messages[#messages + 1] = ARGV[i] end
return deliver(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], messages)
"""
)

# KEYS: a group's set. ARGV: the group's expiry, a channel. The member's score is Redis's time, as deliver() reads it.
GROUP_ADD_LUA = r"""
local time = redis.call('TIME')
redis.call('ZADD', KEYS[1], string.format('%d.%06d', time[1], time[2]), ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""
# KEYS: a group's set. ARGV: a channel.
GROUP_DISCARD_LUA = "return redis.call('ZREM', KEYS[1], ARGV[1])"


class RedisChannelLayer(ChannelsRedisChannelLayer):
    """channels_redis's layer, its internals read and written here only. The subclass provides `receive_shared` (a
    channel every process reads), `keep_reading` (the process's reader), `process_capacity` and the takers."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.prefix_length = kwargs.get("random_prefix_length", 12)
        # The script stores what channels_redis's receive reads only when it alone would have stored it: one host (no
        # sharding of sets), no encryption, a 12-byte unique prefix (the script's token and index).
        self.one_trip = (
            len(self.hosts) == 1 and not kwargs.get("symmetric_encryption_keys") and self.prefix_length == 12
        )
        # Redis's Lua packs msgpack (cmsgpack): a script may make the messages it sends (the event log's does).
        self.packs_msgpack = self.one_trip and kwargs.get("serializer_format", "msgpack") == "msgpack"

    def taken_now(self, channel: str, message: dict) -> bool:
        """Whether something took `message` for `channel` without queueing it (delivery/take_now.py): no, here."""
        return False

    def forget_taker(self, channel: str) -> None:
        """A channel's taker forgotten (delivery/take_now.py): none here."""

    # --- groups: the storage format, written by the scripts ----------------------------------------------------

    def group_key(self, group: str) -> str:
        return f"{self.prefix}:group:{group}"

    def membership_connection(self):
        """The connection the group joins and leaves go out on (GROUP_ADD_LUA, GROUP_DISCARD_LUA)."""
        return self.connection(0)

    def group_delivery(self, group: str) -> tuple[str, list]:
        """The group's key and DELIVER_LUA's deliver() arguments from `group_expiry` to `mark`."""
        assert self.require_valid_group_name(group), "Group name not valid"
        return self.group_key(group), self.delivery_args()

    def delivery_args(self) -> list:
        """DELIVER_LUA's deliver() arguments from `group_expiry` to `mark`, for any valid group (a new token each)."""
        token = f"{random.getrandbits(32):08x}"  # the prefix's first 8 bytes; the message's index is the other 4
        return [
            self.group_expiry,
            self.expiry,
            self.process_capacity,
            self.prefix,
            token,
            MARK,
        ]

    async def deliver(self, group: str, messages: list[dict]) -> int:
        """Each of `messages` added to the set of every process with a member in `group` (GROUP_SEND_LUA), in one
        round trip; how many did not fit."""
        packed = [self.serialize(message)[self.prefix_length :] for message in messages]
        key, args = self.group_delivery(group)
        return await self.connection(0).eval(GROUP_SEND_LUA, 1, key, *args, *packed)

    def deserialize(self, message: bytes) -> dict:
        body = message[self.prefix_length :]
        if not body.startswith(MARK):
            return super().deserialize(message)
        channels, _, packed = body[len(MARK) :].partition(b"\n")
        decoded = super().deserialize(message[: self.prefix_length] + packed)
        decoded["__asgi_channel__"] = channels.decode().split(",")
        return decoded

    # --- a process's sockets: their queues (receive_buffer) -----------------------------------------------------

    async def new_channel(self, prefix: str = "specific") -> str:
        channel = await super().new_channel(prefix)
        self.receive_buffer[channel]  # its queue, made now: what is sent before its first read waits there
        return channel

    async def receive_shared(self, channel: str) -> dict:
        """The next message of a channel that several processes read: channels_redis's way unless overridden."""
        return await self.receive_one_by_one(channel)

    def keep_reading(self, process_channel: str) -> None:
        """Start the process's reader of its set, which `buffer`s what it reads (the subclass's)."""
        raise NotImplementedError

    async def receive(self, channel: str) -> dict:
        if "!" not in channel:  # a channel every process reads (the runs' channel)
            return await self.receive_shared(channel)
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        queue = self.receive_buffer[channel]
        self.keep_reading(self.non_local_name(channel))
        try:
            return await queue.get()
        except asyncio.CancelledError:
            # Its socket went away (channels cancels a consumer's read only then): what comes for it now is dropped.
            self.receive_buffer.pop(channel, None)
            self.forget_taker(channel)
            raise

    async def receive_many(self, channel: str, most: int = 64) -> list[dict]:
        """The channel's next message and those waiting behind it (up to `most`), oldest first.

        A socket behind its stream then takes its backlog in one wake-up of its consumer instead of one each, and
        Daphne writes those frames to the socket in one send (delivery/dispatch.py)."""
        first = await self.receive(channel)
        queue = self.receive_buffer.get(channel) if "!" in channel else None
        taken = [first]
        while queue is not None and not queue.empty() and len(taken) < most:
            taken.append(queue.get_nowait())
        return taken

    async def pop_waiting(self, channel: str, *, block: bool) -> list[Received]:
        """What waits on the process's channel (up to receive_batch), oldest first: one round trip. With `block`, if
        nothing waits, what comes first, or nothing after `brpop_timeout`."""
        connection = self.connection(self.consistent_hash(channel))
        key = self.prefix + channel
        if block:
            popped = await connection.bzmpop(self.brpop_timeout, 1, [key], min=True, count=self.receive_batch)
            taken = popped[1] if popped else []
        else:
            taken = await connection.zpopmin(key, self.receive_batch)
        out = []
        for member, _ in taken:
            message = self.deserialize(member)
            out.append((message.pop("__asgi_channel__", channel), message))
        return out

    def buffer(self, received: list[Received]) -> None:
        queues = self.receive_buffer
        for channels, message in received:
            for channel in channels if isinstance(channels, list) else (channels,):
                queue = queues.get(channel)
                if queue is None:  # its socket is gone (channels_redis kept up to `capacity` for it)
                    continue
                if not queue.empty() or not self.taken_now(channel, message):  # delivery/take_now.py
                    queue.put_nowait(message)

    async def read_one(self, channel: str) -> Received:
        """The next message on the process's channel, channels_redis's way (its backup script, BZPOPMIN, the backup's
        ZADD and the cleaner's ZPOPMIN): for a Redis before 7.0."""
        return await self.receive_single(channel)

    async def receive_one_by_one(self, channel: str) -> dict:
        """channels_redis's own receive (its backup queue, one message a read): for sharded channels, or a Redis
        before 7.0."""
        return await ChannelsRedisChannelLayer.receive(self, channel)

    async def pop_shared(self, channel: str, most: int) -> list[dict]:
        """Up to `most` of the messages waiting on a channel every process reads, oldest first, or if none waits the
        next to come (none after `brpop_timeout`): one BZMPOP. Raises what redis-py raises."""
        connection = self.connection(0)
        popped = await connection.bzmpop(self.brpop_timeout, 1, [self.prefix + channel], min=True, count=most)
        return [self.deserialize(member) for member, _ in (popped[1] if popped else ())]
