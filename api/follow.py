"""Following a thread from a program: the events a tab following it gets, in order, each once (docs/api.md).

One more client of the delivery component (the `delivery` package), as a websocket's consumer is: it gets an
address, follows the thread's group, then reads what it missed exactly as a reconnecting tab does
(`chat.runs.subscribe_texts`: the log's events after its last number, or a snapshot); what the group delivers that
the first read held already is dropped by its number."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

from chat import live, runs
from chat.models import Thread
from delivery import group_name

#: Events read from the delivery and not yet taken by a slow reader: beyond it the delivery's own per-address
#: capacity applies, as for a tab whose socket cannot keep up.
QUEUED_MOST = 1000


@dataclass(frozen=True)
class Sent:
    """One event as a tab gets it: its JSON text, its type and its number (None for the few events without one)."""

    text: str
    type: str
    seq: int | None
    event: dict

    @classmethod
    def of(cls, text: str) -> Sent:
        event = json.loads(text)
        return cls(text=text, type=event.get("type", ""), seq=event.get("seq"), event=event)


class Following:
    """A thread followed: `open` (from then on nothing published is missed), `backlog` (what a reconnecting tab is
    sent first), then `next` for each later event. `close` lets go of the thread's group."""

    def __init__(self, thread_id: uuid.UUID):
        self.thread_id = thread_id
        self.sent_up_to = -1
        self._address = ""
        self._queue: asyncio.Queue[dict] = asyncio.Queue(QUEUED_MOST)
        self._reader: asyncio.Task | None = None

    async def open(self) -> Following:
        delivery = live.delivery()
        self._address = await delivery.new_address()
        await delivery.attach(self._address, group_name(self.thread_id))
        self._reader = asyncio.create_task(self._read(delivery))
        return self

    async def _read(self, delivery) -> None:
        # Its own task: a reader that waits with a timeout (a keep-alive) never cancels a read of the delivery.
        while True:
            await self._queue.put(await delivery.receive(self._address))

    async def backlog(self, thread: Thread, after_seq: int | None) -> list[Sent]:
        """The events after `after_seq` if the thread's log still holds them all, else a snapshot and the rest."""
        sent = [Sent.of(text) for text in await runs.subscribe_texts(thread, after_seq)]
        for each in sent:
            if each.seq is not None:
                self.sent_up_to = max(self.sent_up_to, each.seq)
        return sent

    async def next(self, timeout: float | None = None) -> Sent | None:
        """The thread's next event not sent yet; None when `timeout` seconds pass without one."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            wait = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                message = await asyncio.wait_for(self._queue.get(), wait)
            except TimeoutError:
                if self._reader is not None and self._reader.done():
                    self._reader.result()  # the delivery failed (Redis gone): say so rather than wait on
                return None
            if message.get("type") != "thread.event":
                continue
            sent = Sent.of(message["text"])
            if sent.event.get("thread") not in (None, str(self.thread_id)):
                continue
            if sent.seq is not None:
                if sent.seq <= self.sent_up_to:
                    continue  # the backlog held it already
                self.sent_up_to = sent.seq
            return sent

    async def close(self) -> None:
        """Lets go of the thread's group and stops the reader; again, nothing (a response and its content may both
        close it: api/responses.py)."""
        reader, self._reader = self._reader, None
        address, self._address = self._address, ""
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        if address:
            with contextlib.suppress(Exception):  # leaving: Redis may be what failed
                await live.delivery().detach(address, group_name(self.thread_id))


async def follow(
    thread: Thread, after_seq: int | None = None, *, idle: float | None = None
) -> AsyncIterator[Sent | None]:
    """The thread's events from after `after_seq` (None: from a snapshot) for as long as the caller reads; with
    `idle`, None after each `idle` seconds without one (a stream's keep-alive). Closing the iterator (aclose, or the
    client leaving) lets go of the thread's group."""
    following = await Following(thread.pk).open()
    try:
        for sent in await following.backlog(thread, after_seq):
            yield sent
        while True:
            yield await following.next(idle)
    finally:
        await following.close()
