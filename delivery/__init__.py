"""Delivery: the path from "a run produced an event" to "every client following the thread has it".

One small interface, `Delivery`, used by the run layer (which publishes) and by every kind of client (which attaches
to a thread and reads what it missed): the websocket consumer is one such client (chat/consumers.py), the API's
event stream will be another. Two implementations, one per deployment shape, and one of them is built when the app
starts (`build`, called by chat/apps.py), so that no code above this package asks which shape it runs in:

- `OneProcess` (no REDIS_URL): the thread's log in memory (log.py `MemoryLog`) and channels' in-memory layer with
  its costs cut (memory_layer.py).
- `ThroughRedis` (REDIS_URL; Daphne processes and run workers share the load): the log in Redis (`RedisLog`), and
  channels_redis's layer reading many messages per round trip (redis_layer.py); a publish numbers, keeps and delivers
  its events in one script.

What a thread's events pass through on their way to a socket, inside this package: the log (numbers, tail),
`batched_script.py` (every publish of a process shares its round trips to Redis), the channel layer, and, for a
websocket's consumer, `dispatch.py` (a consumer takes its backlog in one read) and `take_now.py` (an idle consumer is
handed its event without waking its loop).

Addresses and groups: a client has an address (a channel of the layer); it attaches to a thread (its group of
followers), to a person (every socket of that person: their list of threads, their sign-out), and a running run
has an inbox (its run's group), where Stops and answers from other processes reach it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from channels.layers import get_channel_layer

from .log import Event, Make, MemoryLog, Record, RedisLog, Seed, group_name
from .redis_layer import BACKOFF_MOST, REDIS_GONE, backoff

__all__ = [
    "BACKOFF_MOST",
    "REDIS_GONE",
    "RUNS_CHANNEL",
    "Delivery",
    "Event",
    "OneProcess",
    "ThroughRedis",
    "backoff",
    "build",
    "group_name",
    "person_group",
    "run_group",
]

#: The channel that run workers read (chat/worker.py): a run handed over goes to whichever worker takes it first.
RUNS_CHANNEL = "agentweb-runs"


def person_group(user_id: int) -> str:
    """Every socket of one person: their other tabs learn of threads created, renamed or deleted."""
    return f"user.{user_id}"


def run_group(thread_id: uuid.UUID | str) -> str:
    """The inbox of the thread's live run: where Stops and answers sent from other processes reach it."""
    return f"run.{thread_id}"


class Delivery:
    """The interface. A thread's events: `publish` (numbered, kept in the thread's tail, sent to its followers),
    `publish_later`, `read_after` (what a reconnecting client missed), `read_from_last` (the tail from the last
    event of a type: a streaming message rebuilt), `last_seq`. Clients: `new_address`, `attach` / `detach`,
    `tell` (a message to a group: a person's tabs, a run's inbox), `send` (to one address), `receive`."""

    #: Whether several processes share the deployment: a thread's run may stream in a process other than the one a
    #: client is attached to (its process is then reached through the run's inbox).
    shared = False

    def __init__(self, seed: Seed, record: Record, *, layer=None):
        """`seed` and `record`: the database's ceiling of each thread's numbers (log.py); `layer`: the channel layer
        (by default the project's, CHANNEL_LAYERS, looked up when used)."""
        self._seed = seed
        self._record = record
        self._layer = layer

    # --- a thread's events ----------------------------------------------------------------------------------------

    def log(self) -> MemoryLog | RedisLog:
        raise NotImplementedError

    async def publish(self, thread_id: uuid.UUID, events: list[Event]) -> int:
        """Number `events` and send them to every follower of the thread; returns the last number."""
        return await self.log().publish(thread_id, events)

    def publish_later(self, thread_id: uuid.UUID, make: Make) -> asyncio.Future:
        """Queue a publish now whose events `make` gives when it goes out (a stream's frame: log.py)."""
        return self.log().publish_later(thread_id, make)

    async def read_after(self, thread_id: uuid.UUID, seq: int) -> list[str] | None:
        """The thread's events after `seq` as sent, or None when they are not all kept (take a snapshot)."""
        return await self.log().read_after(thread_id, seq)

    async def read_from_last(self, thread_id: uuid.UUID, event_type: str) -> list[str] | None:
        """The thread's events from the last one of `event_type` its tail holds on, as sent; None when it holds none."""
        return await self.log().read_from_last(thread_id, event_type)

    async def last_seq(self, thread_id: uuid.UUID) -> int:
        return await self.log().last_seq(thread_id)

    # --- clients and inboxes ------------------------------------------------------------------------------------

    @property
    def layer(self):
        return self._layer if self._layer is not None else get_channel_layer()

    async def new_address(self) -> str:
        return await self.layer.new_channel()

    async def attach(self, address: str, group: str) -> None:
        """`address` follows `group`: a thread's (group_name), a person's (person_group), a run's (run_group)."""
        await self.layer.group_add(group, address)

    async def detach(self, address: str, group: str) -> None:
        await self.layer.group_discard(group, address)

    async def tell(self, group: str, message: dict[str, Any]) -> None:
        """A message (not a thread's numbered event) to every address of `group`."""
        await self.layer.group_send(group, message)

    async def send(self, address: str, message: dict[str, Any]) -> None:
        await self.layer.send(address, message)

    async def receive(self, address: str) -> dict[str, Any]:
        return await self.layer.receive(address)

    @property
    def reachable(self) -> bool:
        """False while this process finds what carries its messages out of reach (Redis restarting): a frame that
        would write what only it can then announce is refused meanwhile."""
        return not getattr(self.layer, "out_of_reach", False)


class OneProcess(Delivery):
    """Every client and every run in this process: the log in memory."""

    def __init__(self, seed: Seed, record: Record, **kwargs):
        super().__init__(seed, record, **kwargs)
        self._log = MemoryLog(seed, record, layer=self._layer)

    def log(self) -> MemoryLog:
        return self._log


class ThroughRedis(Delivery):
    """Daphne processes and run workers sharing the load through Redis: one log every process numbers from."""

    shared = True

    def __init__(
        self, seed: Seed, record: Record, *, url: str, prefix: str, client_for: Callable[[str], Any], **kwargs
    ):
        super().__init__(seed, record, **kwargs)
        self._url = url
        self._prefix = prefix
        self._client_for = client_for
        self._log: tuple[asyncio.AbstractEventLoop, RedisLog] | None = None

    def log(self) -> RedisLog:
        loop = asyncio.get_running_loop()
        if self._log is None or self._log[0] is not loop:  # a Redis client belongs to the loop that opened it
            layer = self.layer
            if getattr(layer, "hosts", None) != [{"address": self._url}]:
                layer = None  # not redis_layer.py's on this Redis: its script cannot send to its groups
            log = RedisLog(self._client_for(self._url), self._seed, self._record, prefix=self._prefix, layer=layer)
            self._log = (loop, log)
        return self._log[1]


def build(*, redis_url: str | None, prefix: str, seed: Seed, record: Record) -> Delivery:
    """The deployment's delivery, chosen once when the app starts: through Redis when there is one, else in memory."""
    if not redis_url:
        return OneProcess(seed, record)
    return ThroughRedis(seed, record, url=redis_url, prefix=prefix, client_for=aioredis.from_url)
