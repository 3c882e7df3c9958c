"""One event log per thread: the only place where a thread's events get their numbers.

`publish(thread, events)` numbers the events, keeps them in the thread's tail and sends them to the thread's
channel-layer group (every socket following the thread, in any process); `read_after(thread, seq)` gives a
reconnecting tab the events after the last one it applied, or None when the tail no longer reaches back that
far (the tab then takes a snapshot). Zulip's event queues work the same way ("register", then the events
after the state's id).

A subscriber to a thread whose run streams in another process rebuilds that run's message from the tail
(chat/runs/subscribe.py): `read_from_last(thread, type)` gives the events from the last one of that type on.

Two implementations with one contract (tests/delivery/test_log.py):

- `MemoryLog`, for one process (no REDIS_URL): a counter and a bounded deque per thread. Its counter starts
  from the thread's `last_seq` in the database, read once per thread and process.
- `RedisLog`, when REDIS_URL is set: every process numbers from the same counter (`INCRBY`, seeded with the
  database's `last_seq` when Redis does not have it), and the tail is a capped stream (`XADD … MAXLEN ~`)
  whose entry ids are the events' numbers. A publish is one script, whatever the number of events, which also
  sends them to the thread's group when the channel layer is delivery/redis_layer.py's; the publishes of every
  thread the process runs share their round trips (delivery/batched_script.py). A stream's frames are coalesced before
  they get here (chat/live/coalesce.py), so that is one script per frame at most, never one per token. A read of
  the tail is one script too, whose reply is the texts joined in one string (what a reconnecting tab missed).
"""

from __future__ import annotations

import asyncio
import functools
import json
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from channels.layers import get_channel_layer

from .adapters.channels_redis import DELIVER_LUA
from .batched_script import BatchedScript
from .redis_layer import RedisChannelLayer

_dumps = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(…, ensure_ascii=False) without its set-up

#: Events of each thread kept for reconnecting tabs: about a minute and a half of one stream at the coalescing
#: window's pace (docs/protocol.md, "Reconnecting", promises 5,000).
TAIL_EVENTS = 5000
#: Threads whose tail a process keeps in memory (those it opened first lose theirs first).
THREADS_KEPT = 1000

#: An event as its builder made it (chat/live/events.py): its type and its fields, numbered here.
Event = tuple[str, dict[str, Any]]
Seed = Callable[[uuid.UUID], Awaitable[int]]
#: publish_later's events, made when the publish goes out.
Make = Callable[[], list[Event]]
Record = Callable[[uuid.UUID, int], Awaitable[None]]

#: The database keeps, per thread, a number no event has reached yet (Thread.last_seq): a log seeded from it after
#: a restart, or a Redis that lost its data, never gives out a number a tab has seen. It is raised this far ahead
#: whenever the numbers reach it: once per thread and process, then every million events.
CEILING_STEP = 1_000_000


def next_ceiling(last: int) -> int:
    return (last // CEILING_STEP + 1) * CEILING_STEP


async def _no_record(thread_id: uuid.UUID, ceiling: int) -> None:
    return None


def group_name(thread_id: uuid.UUID | str) -> str:
    """The channel-layer group of a thread's followers."""
    return f"thread.{thread_id}"


class _Thread:
    """What a MemoryLog holds of one thread."""

    __slots__ = ("ceiling", "group", "key", "lock", "seq", "tail")

    def __init__(self, thread_id: uuid.UUID, seq: int, keep: int):
        # Made once rather than for every event (a stream sends dozens of frames a second).
        self.key = str(thread_id)
        self.group = group_name(thread_id)
        self.seq = seq
        self.ceiling = seq
        self.tail: deque[tuple[int, str]] = deque(maxlen=keep)
        # Events reach the group in the order of their numbers, even from two publishers at once.
        self.lock = asyncio.Lock()


class MemoryLog:
    """The log of a single process: it hands out every number of every thread it serves."""

    def __init__(
        self,
        seed: Seed,
        record: Record = _no_record,
        *,
        keep: int = TAIL_EVENTS,
        threads_kept: int = THREADS_KEPT,
        layer=None,
    ):
        """`layer`: the channel layer followers read (by default the project's, looked up at each publish)."""
        self._seed = seed
        self._record = record
        self._keep = keep
        self._threads_kept = threads_kept
        self._threads: dict[uuid.UUID, _Thread] = {}
        self._followers = layer

    async def publish(self, thread_id: uuid.UUID, events: list[Event]) -> int:
        thread = self._threads.get(thread_id) or await self._open(thread_id)
        layer = self._followers or get_channel_layer()
        async with thread.lock:
            for type_, fields in events:
                thread.seq += 1
                # Serialised once here rather than once per subscribed socket.
                text = _dumps({"type": type_, "thread": thread.key, "seq": thread.seq, **fields})
                thread.tail.append((thread.seq, text))
                await layer.group_send(thread.group, {"type": "thread.event", "text": text})
            if thread.seq > thread.ceiling:
                thread.ceiling = next_ceiling(thread.seq)
                await self._record(thread_id, thread.ceiling)
            return thread.seq

    def publish_later(self, thread_id: uuid.UUID, make: Make) -> asyncio.Future:
        """`publish` of the events `make` gives, in a task of its own: see RedisLog.publish_later."""
        return asyncio.ensure_future(_publish_made(self, thread_id, make))

    async def read_after(self, thread_id: uuid.UUID, seq: int) -> list[str] | None:
        thread = self._threads.get(thread_id)
        if thread is None or seq > thread.seq:
            # Not published here since this process started, or a number it never gave out (it restarted).
            return None
        if seq == thread.seq:
            return []
        tail = thread.tail
        if not tail or tail[0][0] > seq + 1:
            return None
        return [text for number, text in tail if number > seq]

    async def read_from_last(self, thread_id: uuid.UUID, event_type: str) -> list[str] | None:
        thread = self._threads.get(thread_id)
        if thread is None:
            return None
        prefix = _type_prefix(event_type)
        texts = [text for _, text in thread.tail]
        for i in range(len(texts) - 1, -1, -1):
            if texts[i].startswith(prefix):
                return texts[i:]
        return None

    async def last_seq(self, thread_id: uuid.UUID) -> int:
        thread = self._threads.get(thread_id) or await self._open(thread_id)
        return thread.seq

    async def _open(self, thread_id: uuid.UUID) -> _Thread:
        seq = await self._seed(thread_id)
        thread = self._threads.get(thread_id)  # another publisher may have opened it meanwhile
        if thread is None:
            thread = self._threads[thread_id] = _Thread(thread_id, seq, self._keep)
            self._forget_oldest()
        return thread

    def _forget_oldest(self) -> None:
        """Keep the tails of at most `threads_kept` threads (a tab reconnecting to an older one takes a snapshot).
        Their counters stay: the database may not know a thread's last number yet, so one seeded again from it
        could give out a number twice."""
        if len(self._threads) > self._threads_kept:
            for thread in list(self._threads.values())[: len(self._threads) - self._threads_kept]:
                thread.tail.clear()


# keep(): numbers a publish's events from the thread's counter and adds them to its stream. `seed` is the database's
# last number (used when Redis has no counter of the thread), `cap` the stream's length, `seconds` its lifetime;
# `halves` holds each event as the JSON text before its number and the text after it, from index `from` on.
# Returns the last number and the events' texts.
_KEEP_LUA = r"""
local function keep(counter, stream, seed, cap, seconds, halves, from)
  if redis.call('EXISTS', counter) == 0 then
    seed = tonumber(seed)
    local newest = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
    if newest then seed = math.max(seed, tonumber(string.match(newest[1], '^(%d+)'))) end
    redis.call('SET', counter, string.format('%d', seed), 'NX')
  end
  local count = (#halves - from + 1) / 2
  local last = redis.call('INCRBY', counter, count)
  local seq = last - count
  local texts = {}
  for i = from, #halves, 2 do
    seq = seq + 1
    local number = string.format('%d', seq)
    local text = halves[i] .. number .. halves[i + 1]
    redis.call('XADD', stream, 'MAXLEN', '~', cap, number .. '-0', 't', text)
    texts[#texts + 1] = text
  end
  redis.call('EXPIRE', stream, seconds)
  return last, texts
end
"""
# KEYS: the thread's counter, its stream. ARGV: the seed, the stream's cap, its lifetime, then the halves.
_PUBLISH = (
    _KEEP_LUA
    + """
local last = keep(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV, 4)
return last
"""
)
# The same, and the events sent to the thread's group in the same script, when the channel layer is
# delivery/redis_layer.py's on the same Redis. KEYS: the counter, the stream, the group's set. ARGV: the seed, the
# cap, the lifetime, deliver()'s six arguments from `group_expiry` to `mark`, then the halves. Returns the last
# number and how many messages did not fit in a process's set.
_PUBLISH_AND_SEND = (
    _KEEP_LUA
    + DELIVER_LUA
    + """
local last, texts = keep(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV, 10)
local packed = {}
for i, text in ipairs(texts) do packed[i] = cmsgpack.pack({type = 'thread.event', text = text}) end
local over = deliver(KEYS[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], packed)
return {last, over}
"""
)
# joined(): stream entries' texts as one string, joined by line breaks (a JSON text has none of its own), with their
# count: one reply for redis-py to parse rather than four for each entry, whose parsing in Python made a reconnecting
# tab's read of 80 events cost 1.5 ms of its process's CPU (docs/performance.md, P21).
_JOINED_LUA = r"""
local function joined(entries)
  local texts = {}
  for i, entry in ipairs(entries) do texts[i] = entry[2][2] end
  return {#entries, table.concat(texts, '\n')}
end
"""
# KEYS: the thread's stream. ARGV: the JSON text an event of the type sought begins with, how many entries to read
# back at a time. The entries from the last such event on, joined, or nil when the stream holds none.
_FROM_LAST = (
    _JOINED_LUA
    + """
local before = '+'
while true do
  local entries = redis.call('XREVRANGE', KEYS[1], before, '-', 'COUNT', ARGV[2])
  for _, entry in ipairs(entries) do
    if string.sub(entry[2][2], 1, #ARGV[1]) == ARGV[1] then
      return joined(redis.call('XRANGE', KEYS[1], entry[1], '+'))
    end
  end
  if #entries < tonumber(ARGV[2]) then return false end
  before = '(' .. entries[#entries][1]
end
"""
)
# KEYS: the thread's counter, its stream. ARGV: the number after which the events are wanted. Returns the last number
# given out (nil if none), the first number read (0 if none), and the entries from it on, joined.
_AFTER = (
    _JOINED_LUA
    + """
local last = redis.call('GET', KEYS[1])
if not last then return false end
local entries = redis.call('XRANGE', KEYS[2], string.format('%d', tonumber(ARGV[1]) + 1) .. '-0', '+')
local first = entries[1] and string.match(entries[1][1], '^(%d+)') or 0
return {last, first, joined(entries)}
"""
)
# What Redis keeps of a thread nobody publishes to: its tail goes after a day (its counter stays).
TAIL_SECONDS = 86_400


class _Route(NamedTuple):
    """Where a thread's publishes go: its id as text, its group, the script's keys (counter, stream[, group])."""

    thread: str
    group: str
    keys: list[str]


class RedisLog:
    """The log that every process shares through Redis."""

    def __init__(
        self,
        client,
        seed: Seed,
        record: Record = _no_record,
        *,
        prefix: str = "agentweb",
        keep: int = TAIL_EVENTS,
        layer: RedisChannelLayer | None = None,
    ):
        """`layer`: the channel layer, when it is delivery/redis_layer.py's on the same Redis as `client`: a publish
        then numbers, keeps and sends its events in one script. Otherwise the events go to the project's channel
        layer after the script, one group send for all of them, and two processes' publishes to one thread may then
        reach a follower out of order (agentweb's settings always pair this log with agentweb's Redis layer)."""
        self._client = client
        self._seed = seed
        self._record = record
        self._prefix = prefix
        self._keep = keep
        self._layer = layer if getattr(layer, "packs_msgpack", False) else None
        # Every publish of the process, to any thread, shares its round trips with those made meanwhile.
        self._publish = BatchedScript(client, _PUBLISH_AND_SEND if self._layer else _PUBLISH)
        self._from_last = client.register_script(_FROM_LAST)
        self._after = client.register_script(_AFTER)
        # The database's number for each thread, read once per process (Redis is asked to use it only when it
        # has no counter of the thread: a first publish, or after Redis lost its data).
        self._seeds: dict[uuid.UUID, int] = {}
        # This process's publishes to a thread go out one at a time, in the order of their numbers.
        self._locks: dict[uuid.UUID, asyncio.Lock] = {}
        # What every publish to a thread sends the same (every frame of a stream is a publish).
        self._routes: dict[uuid.UUID, _Route] = {}
        # Publishes to each thread under way through `publish` (publish_later queues behind them, in turn).
        self._busy: dict[uuid.UUID, int] = {}
        self._recording: set[asyncio.Future] = set()

    def _keys(self, thread_id: uuid.UUID) -> list[str]:
        base = f"{self._prefix}:log:{thread_id}"
        return [f"{base}:seq", f"{base}:events"]

    def _route(self, thread_id: uuid.UUID) -> _Route:
        route = self._routes.get(thread_id)
        if route is None:
            group, keys = group_name(thread_id), self._keys(thread_id)
            if self._layer is not None:
                keys.append(self._layer.group_delivery(group)[0])
            route = self._routes[thread_id] = _Route(str(thread_id), group, keys)
        return route

    async def publish(self, thread_id: uuid.UUID, events: list[Event]) -> int:
        self._busy[thread_id] = self._busy.get(thread_id, 0) + 1
        try:
            return await self._publish_now(thread_id, events)
        finally:
            self._busy[thread_id] -= 1

    def publish_later(self, thread_id: uuid.UUID, make: Make) -> asyncio.Future:
        """Queue a publish now, behind every one made before, whose events `make` gives when it goes out to Redis:
        what a stream sends meanwhile joins it (chat/live/coalesce.py). The future of its last number (None when
        `make` gave no events). Queued at once when nothing else of the thread's is under way (a publish waiting for
        its number, the thread's counter being read); else in a task of its own, in turn."""
        if self._busy.get(thread_id) or self._layer is None or thread_id not in self._seeds:
            self._busy[thread_id] = self._busy.get(thread_id, 0) + 1
            made = asyncio.ensure_future(_publish_made(self, thread_id, make, publish=self._publish_now))
            made.add_done_callback(functools.partial(self._done_with, thread_id))
            return made
        route = self._route(thread_id)

        def args() -> list[Any] | None:
            parts: list[str] = []
            for type_, fields in make():
                parts += _halves(type_, route.thread, fields)
            if not parts:
                return None
            return [self._seeds[thread_id], self._keep, TAIL_SECONDS, *self._layer.delivery_args(), *parts]

        sent = self._publish.submit(route.keys, args)
        last = sent.get_loop().create_future()
        sent.add_done_callback(lambda sent: self._landed(thread_id, route, sent, last))
        return last

    def _done_with(self, thread_id: uuid.UUID, _: asyncio.Future) -> None:
        self._busy[thread_id] -= 1

    def _landed(self, thread_id: uuid.UUID, route: _Route, sent: asyncio.Future, last: asyncio.Future) -> None:
        """publish_later's reply in: its number to `last`, and the ceiling raised if the numbers reached it."""
        if sent.cancelled():
            last.cancel()
        elif sent.exception() is not None:
            last.set_exception(sent.exception())
        elif sent.result() is None:
            last.set_result(None)
        else:
            number, over = sent.result()
            self._layer.note_not_fitting(route.group, over)
            if number > self._seeds[thread_id]:  # rare: once every CEILING_STEP events
                self._seeds[thread_id] = next_ceiling(number)
                recording = asyncio.ensure_future(self._record(thread_id, self._seeds[thread_id]))
                self._recording.add(recording)
                recording.add_done_callback(self._recording.discard)
            last.set_result(number)

    async def _publish_now(self, thread_id: uuid.UUID, events: list[Event]) -> int:
        seed = self._seeds.get(thread_id)
        if seed is None:
            seed = self._seeds[thread_id] = await self._seed(thread_id)
        route = self._route(thread_id)
        parts: list[str] = []
        for type_, fields in events:
            parts += _halves(type_, route.thread, fields)
        async with self._lock(thread_id):
            if self._layer is not None:
                last = await self._publish_and_send(route, seed, parts)
            else:
                last = await self._publish(route.keys, [seed, self._keep, TAIL_SECONDS, *parts])
                await self._send(thread_id, last, parts)
            if last > self._seeds[thread_id]:  # the ceiling this process last knew of (see CEILING_STEP)
                self._seeds[thread_id] = next_ceiling(last)
                await self._record(thread_id, self._seeds[thread_id])
        return last

    async def _publish_and_send(self, route: _Route, seed: int, parts: list[str]) -> int:
        delivery = self._layer.delivery_args()
        last, over = await self._publish(route.keys, [seed, self._keep, TAIL_SECONDS, *delivery, *parts])
        self._layer.note_not_fitting(route.group, over)
        return last

    async def _send(self, thread_id: uuid.UUID, last: int, parts: list[str]) -> None:
        """The events numbered up to `last` to the thread's followers, through the project's channel layer."""
        layer, group = get_channel_layer(), group_name(thread_id)
        count = len(parts) // 2
        first = last - count + 1
        messages = [
            {"type": "thread.event", "text": f"{parts[2 * i]}{first + i}{parts[2 * i + 1]}"} for i in range(count)
        ]
        send_all = getattr(layer, "group_send_all", None)  # delivery/redis_layer.py: all of them in one trip
        if send_all is not None:
            await send_all(group, messages)
        else:
            for message in messages:
                await layer.group_send(group, message)

    def _lock(self, thread_id: uuid.UUID) -> asyncio.Lock:
        lock = self._locks.get(thread_id)
        if lock is None:
            lock = self._locks[thread_id] = asyncio.Lock()
        return lock

    async def read_after(self, thread_id: uuid.UUID, seq: int) -> list[str] | None:
        # One round trip (the script reads the counter and the stream together, as a transaction did).
        reply = await self._after(keys=self._keys(thread_id), args=[seq])
        if not reply or seq > int(reply[0]):
            return None
        last, first, entries = reply
        if seq == int(last):
            return []
        if int(first) != seq + 1:
            return None  # the stream was trimmed past it
        return _split(entries)

    async def read_from_last(self, thread_id: uuid.UUID, event_type: str) -> list[str] | None:
        # One round trip, however far back the event is: the script reads the stream backwards in Redis.
        entries = await self._from_last(keys=self._keys(thread_id)[1:], args=[_type_prefix(event_type), 200])
        return _split(entries) if entries else None

    async def last_seq(self, thread_id: uuid.UUID) -> int:
        last = await self._client.get(self._keys(thread_id)[0])
        if last is not None:
            return int(last)
        seed = self._seeds.get(thread_id)
        return seed if seed is not None else await self._seed(thread_id)


async def _publish_made(log, thread_id: uuid.UUID, make: Make, *, publish=None) -> int | None:
    events = make()
    return await (publish or log.publish)(thread_id, events) if events else None


def _halves(type_: str, thread: str, fields: dict[str, Any]) -> tuple[str, str]:
    """The event's JSON text before its number and after it: the same text MemoryLog writes in one piece."""
    return _before_number(type_, thread), (f", {_dumps(fields)[1:]}" if fields else "}")


@functools.lru_cache(maxsize=4096)  # the same for every frame of a stream
def _before_number(type_: str, thread: str) -> str:
    return f'{{"type": {_dumps(type_)}, "thread": "{thread}", "seq": '


def _type_prefix(event_type: str) -> str:
    """How the text of every event of that type begins (see _halves)."""
    return f'{{"type": {_dumps(event_type)}, '


def _split(entries: list) -> list[str] | None:
    """The texts of what the scripts' joined() returned; None (the tab then takes a snapshot) were a text ever to hold
    a line break, which JSON escapes."""
    count, joined = entries
    texts = (joined.decode() if isinstance(joined, bytes) else joined).split("\n")
    return texts if len(texts) == count else None
