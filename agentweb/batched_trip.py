"""A read that many sockets make at once, the calls waiting at one moment made together in one trip to the
database thread.

Every database call of a websocket is a trip to the process's one database thread (channels'
database_sync_to_async), and every query in a trip hands the GIL back and forth with the event loop. In a
reconnect storm a thousand tabs each make two such trips to read their session, user and thread, one query at a
time, and wait for each other's in that thread's queue (docs/performance.md, P23). Here a call made while none is
in flight goes at once; the calls made meanwhile go together in the next trip, where `read_all` answers all of them
with a few queries. A lone call costs what it did; under load the calls share their trips and their queries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async

#: On the database thread: one result per call's arguments, in order; an Exception instance is raised to its caller.
ReadAll = Callable[[list[tuple]], list[Any]]


class BatchedTrip:
    def __init__(self, read_all: ReadAll, *, most: int = 200):
        self._read_all = database_sync_to_async(read_all)
        self._most = most
        # Per event loop (a trip's futures belong to the loop that made them; tests run several loops).
        self._waiting: dict[asyncio.AbstractEventLoop, list[tuple[tuple, asyncio.Future]]] = {}
        self._readers: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}

    async def __call__(self, *args) -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._waiting.setdefault(loop, []).append((args, future))
        reader = self._readers.get(loop)
        if reader is None or reader.done():
            self._forget_closed_loops()
            self._readers[loop] = loop.create_task(self._read_waiting(loop))
        return await future

    async def _read_waiting(self, loop: asyncio.AbstractEventLoop) -> None:
        waiting = self._waiting[loop]
        while waiting:
            batch = waiting[: self._most]
            del waiting[: self._most]
            try:
                results = await self._read_all([args for args, _ in batch])
            except asyncio.CancelledError:
                for _, future in batch + waiting:
                    future.cancel()
                waiting.clear()
                raise
            except Exception as error:  # the database out of reach: each caller of this trip hears it
                results = [error] * len(batch)
            for (_, future), result in zip(batch, results, strict=True):
                if future.done():  # its caller went away meanwhile
                    continue
                if isinstance(result, Exception):
                    future.set_exception(result)
                else:
                    future.set_result(result)

    def _forget_closed_loops(self) -> None:
        for loop in [loop for loop in self._readers if loop.is_closed()]:
            self._readers.pop(loop, None)
            self._waiting.pop(loop, None)
