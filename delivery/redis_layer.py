"""channels_redis's channel layer, receiving a process's messages many per round trip, and sending a group its
messages in one.

Every socket of a Daphne process has a channel of its own, but channels_redis keeps all of them in one sorted set
per process and reads it one message at a time, each message four round trips to Redis in turn (the backup
script, BZPOPMIN, the backup's ZADD, then the cleaner's ZPOPMIN, which the next read waits for). That one loop is
all a process receives through: beside 200 streams over two processes it fell behind for good, and tokens reached
their sockets 100 s late (docs/performance.md, "Production shape"). Here one reader per process takes every message
waiting, up to `receive_batch`, and puts each in its socket's queue, with one BZMPOP that, when none waits, blocks
until one comes (on a Redis before 7.0: a ZPOPMIN, then channels_redis's BZPOPMIN with its backup queue when none
waited). A socket's read is then a wait on its queue.
channels_redis made each waiting read two tasks (one for the process's read lock, one for its queue) and made them
again for every message: CPU per message per socket, and objects the cyclic garbage collector walks (with 2,000
idle sockets a full collection took 339 ms, now 284 ms on this machine: docs/performance.md). What the
layer promises is unchanged: each channel's messages in the order they were sent, none lost to a socket going
away, and the same capacity per socket, expiry and groups. A socket that went away has no queue: what still comes
for it is dropped (channels_redis kept up to `capacity` of it, for good).

Sending to a group was four round trips a message (drop the group's expired members, read them, drop each
process's expired messages, then a script that adds the message); the run's every frame paid them, and the worker
of 200 streams spent most of its CPU there. `group_send_all` sends any number of messages to a group in one round
trip: one script reads the members and adds each message to each process's set, naming that process's members as
channels_redis does (`__asgi_channel__`, a list). Rather than pack each message again with a process's channels
in it, the script stores `MARK`, the channels, a newline and the message as packed (by channels_redis, or by the
event log's script with Redis's cmsgpack); `deserialize` reads both forms. The event log sends a thread's events
in its own script, which includes this one's delivery (DELIVER_LUA).

Joining and leaving groups: channels_redis sent each on a connection of its own while others were in flight, so
thousands of sockets opening or closing at once opened thousands of connections to Redis. Here the joins (and
leaves) made at one moment go out together on one connection (delivery/batched_script.py).

With several Redis hosts, or encryption, sending and groups are channels_redis's own.
"""

from __future__ import annotations

import asyncio
import collections
import logging

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from delivery.adapters import channels_redis
from delivery.adapters.channels_redis import DELIVER_LUA, DELIVER_MOST, MARK, Received
from delivery.batched_script import BatchedScript
from delivery.take_now import TakesNow

__all__ = ["DELIVER_LUA", "MARK", "REDIS_GONE", "RedisChannelLayer", "backoff"]

logger = logging.getLogger(__name__)

#: What redis-py raises while Redis is out of reach (restarting, the network cut, still loading its data): a process
#: waits and tries again (`backoff`), a run streaming then is interrupted (chat/runs/execute.py).
REDIS_GONE = (RedisConnectionError, RedisTimeoutError)


#: The longest wait between two tries to reach Redis: once it answers again, every process has tried within this.
BACKOFF_MOST = 5.0


def backoff(failures: int) -> float:
    """Seconds to wait after `failures` failed tries in a row to reach Redis: 0.2 s, doubling, at most BACKOFF_MOST."""
    return min(0.1 * 2**failures, BACKOFF_MOST)


class RedisChannelLayer(TakesNow, channels_redis.RedisChannelLayer):
    """The layer of agentweb/settings.py's CHANNEL_LAYERS with Redis (channels_redis's internals it relies on:
    delivery/adapters/channels_redis.py)."""

    def __init__(
        self,
        *args,
        receive_batch: int = 500,
        shared_receive_batch: int = 16,
        process_capacity: int | None = None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.receive_batch = receive_batch
        # A channel every worker reads (the runs'): how many of its waiting messages one read takes. Enough that a
        # burst of turns is taken in a few round trips, few enough that a second worker still gets its share.
        self.shared_receive_batch = shared_receive_batch
        # What a read of a shared channel took beyond the message it returned, for the next reads.
        self.shared_taken: dict[str, collections.deque[dict]] = collections.defaultdict(collections.deque)
        # One set holds what every socket of a process is sent, so it cannot have one socket's capacity: 1,000
        # (the sockets' capacity) filled in 0.2 s beside 100 streams, or a few seconds of a reconnect storm, and
        # every socket of the process then lost the same events. Each socket's own queue in the process keeps
        # `capacity` (a socket that stops reading loses its oldest); this bounds what Redis holds for a process
        # that stopped reading altogether, with the expiry.
        self.process_capacity = process_capacity or self.capacity * 50
        self.reader: asyncio.Task | None = None
        # Whether the process's reader last found Redis out of reach (until a read succeeds again): a socket's frame
        # that would write what only Redis can then announce is refused meanwhile, before it writes anything.
        self.out_of_reach = False
        # Whether Redis has BZMPOP (7.0), until it says it does not.
        self.blocking_pop_many = True
        # Joining and leaving groups, in the event loop that runs them (see group_add).
        self.membership: dict[asyncio.AbstractEventLoop, tuple[BatchedScript, BatchedScript]] = {}
        # The groups this process's channels are in, as joined through group_add: a Redis that restarted has lost
        # them, and they are joined again once it answers (join_again).
        self.joined: dict[str, set[str]] = collections.defaultdict(set)

    async def group_add(self, group: str, channel: str) -> None:
        """channels_redis's, but the joins made at one moment go out together on one connection.

        channels_redis sends each join (and each leave) on a connection of its own while the others are in use:
        5,000 sockets opening or closing at once opened 5,000 connections to Redis, kept them in the process's
        pool for good, and took 7 s to join their groups on a quiet machine; closing, Daphne killed the
        consumers still waiting after 10 s, and they never left their groups."""
        if not self.one_trip:
            return await super().group_add(group, channel)
        assert self.require_valid_group_name(group), "Group name not valid"
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        self.joined[group].add(channel)
        await self.batched()[0]([self.group_key(group)], [self.group_expiry, channel])

    async def group_discard(self, group: str, channel: str) -> None:
        if not self.one_trip:
            return await super().group_discard(group, channel)
        assert self.require_valid_group_name(group), "Group name not valid"
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        channels = self.joined.get(group)
        if channels is not None:
            channels.discard(channel)
            if not channels:
                del self.joined[group]
        await self.batched()[1]([self.group_key(group)], [channel])

    async def join_again(self) -> None:
        """Every group this process's channels joined, joined again (in one pipeline: delivery/batched_script.py),
        before the process reads again after Redis was out of reach: it may have restarted empty, and a socket whose
        group was lost would hear no more of its thread. Joining again only renews a membership. Raises what redis-py
        raises when Redis is still out of reach."""
        if not self.one_trip or not self.joined:
            return
        add = self.batched()[0]
        joins = [
            add([self.group_key(group)], [self.group_expiry, channel])
            for group, channels in list(self.joined.items())
            for channel in list(channels)
        ]
        await asyncio.gather(*joins)
        logger.info("Redis answers again: this process's %d group membership(s) joined again", len(joins))

    def batched(self) -> tuple[BatchedScript, BatchedScript]:
        """This event loop's group joins and leaves (a connection belongs to the loop that opened it)."""
        loop = asyncio.get_running_loop()
        found = self.membership.get(loop)
        if found is None:
            for other in [other for other in self.membership if other.is_closed()]:
                del self.membership[other]
            connection = self.membership_connection()
            found = self.membership[loop] = (
                BatchedScript(connection, channels_redis.GROUP_ADD_LUA),
                BatchedScript(connection, channels_redis.GROUP_DISCARD_LUA),
            )
        return found

    async def group_send(self, group: str, message: dict) -> None:
        await self.group_send_all(group, [message])

    async def group_send_all(self, group: str, messages: list[dict]) -> None:
        """Send each of `messages` to every member of `group`, in order: one round trip for all of them."""
        if not self.one_trip:
            for message in messages:
                await super().group_send(group, message)
            return
        assert len(messages) <= DELIVER_MOST, "Too many messages for one group send"
        self.note_not_fitting(group, await self.deliver(group, messages))

    @staticmethod
    def note_not_fitting(group: str, over: int) -> None:
        if over:
            logger.warning("%d message(s) to %s did not fit: a process's set was full", over, group)

    async def receive_shared(self, channel: str) -> dict:
        """The next message of a channel that several processes read (the runs' channel, chat/worker.py).

        channels_redis reads such a channel one message at a time, four round trips to Redis each in turn (its
        backup script, BZPOPMIN, the backup's ZADD, the cleaner's ZPOPMIN). On a worker busy with 200 streams each
        round trip waited its turn on the event loop: 200 turns sent at once reached the worker over 12-16 s, and
        the last ones failed as taken by no worker (AGENTWEB_RUN_HANDOVER_SECONDS). Here one BZMPOP takes up to
        `shared_receive_batch` of the messages waiting (or, if none waits, the next to come), and the reads after
        it return them in order. A message taken by a process that then dies is not read again (channels_redis's
        backup would give it to the next read): a handed-over run that no worker starts fails after the handover's
        wait with a message saying so (chat/runs/start.py), as it would with no worker running."""
        assert self.require_valid_channel_name(channel, receive=True), "Channel name invalid"
        if len(self.hosts) != 1 or not self.blocking_pop_many:  # sharded channels, or a Redis before 7.0
            return await self.receive_one_by_one(channel)
        taken = self.shared_taken[channel]
        failures = 0
        while not taken:
            try:
                popped = await self.pop_shared(channel, self.shared_receive_batch)
            except ResponseError as error:
                if "unknown command" not in str(error).lower():
                    raise
                self.blocking_pop_many = False
                return await self.receive_one_by_one(channel)
            except REDIS_GONE:
                # Redis restarting or out of reach: the worker waits for it rather than end (channels' runworker
                # ends with its listener), and takes runs again once it answers.
                failures += 1
                logger.warning("reading %s from Redis failed (%d in a row); trying again", channel, failures)
                await asyncio.sleep(backoff(failures))
                continue
            if failures:
                logger.info("reading %s from Redis again", channel)
                failures = 0
            taken.extend(popped)
        return taken.popleft()

    def keep_reading(self, process_channel: str) -> None:
        """The process's one reader of its set, started by the first read (again in a new event loop)."""
        reader = self.reader
        loop = asyncio.get_running_loop()
        if reader is None or reader.done() or reader.get_loop() is not loop:
            self.reader = loop.create_task(self.read_forever(process_channel))

    async def read_forever(self, process_channel: str) -> None:
        """Hands every message for this process's sockets to their queues, in the order Redis holds them."""
        failures = 0
        while True:
            try:
                if failures:  # Redis may have restarted empty, without this process's groups: they come first
                    await self.join_again()
                    self.out_of_reach = False  # it answered (the read may wait long for a message)
                batch = await self.next_batch(process_channel)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # Redis restarting or out of reach: the sockets wait, as they would for news
                failures += 1
                gone = isinstance(error, REDIS_GONE)  # its traceback says nothing more
                self.out_of_reach = gone
                message = "reading this process's messages from Redis failed (%d in a row): %s"
                logger.warning(message, failures, error, exc_info=not gone)
                await asyncio.sleep(backoff(failures))
                continue
            failures, self.out_of_reach = 0, False
            self.buffer(batch)

    async def next_batch(self, channel: str) -> list[Received]:
        """The messages waiting on the process's channel (up to receive_batch), oldest first; if none waits, the
        next to come (or none, after `brpop_timeout`).

        One BZMPOP (Redis 7) does both in one round trip. Without it, a ZPOPMIN of what waits, and when nothing
        did, channels_redis's blocking read: its backup script, BZPOPMIN, the backup's ZADD and the cleaner's
        ZPOPMIN, four more round trips for each message that comes while the process's set is empty — which,
        beside a few streams or none, is every message."""
        if self.blocking_pop_many:
            try:
                return await self.pop_waiting(channel, block=True)
            except ResponseError as error:
                if "unknown command" not in str(error).lower():
                    raise
                self.blocking_pop_many = False  # a Redis before 7.0
                logger.info("Redis has no BZMPOP (7.0): reading this process's messages the slower way")
        batch = await self.pop_waiting(channel, block=False)
        return batch or [await self.read_one(channel)]

    async def close_pools(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            self.reader = None
        self.membership.clear()
        await super().close_pools()
