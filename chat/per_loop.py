"""Work done for a set of members by one task per event loop, while the set has any: the heartbeat of the runs
streaming in a process (chat/runs/heartbeat.py), the flush of their text (chat/flush.py).

One `PerLoop` of each is made by chat/apps.py for the app's lifetime. Per event loop, not per process: a task
belongs to its loop, and tests run one loop per test."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Hashable
from typing import Any


class PerLoop:
    """Members by key, and a task running `work(members)` while the running loop has any."""

    def __init__(self, name: str, work: Callable[[dict[Hashable, Any]], Coroutine[Any, Any, None]]):
        self.name = name
        self._work = work
        self._loops: dict[asyncio.AbstractEventLoop, tuple[dict[Hashable, Any], asyncio.Task]] = {}

    def add(self, key: Hashable, value: Any = None) -> None:
        loop = asyncio.get_running_loop()
        found = self._loops.get(loop)
        if found is None or found[1].done():  # none yet, or its task was cancelled: the members it had go on
            members: dict[Hashable, Any] = found[0] if found is not None else {}
            found = (members, loop.create_task(self._work(members), name=self.name))
            self._loops[loop] = found
        found[0][key] = value

    def discard(self, key: Hashable) -> None:
        """The last member of the loop stops its task."""
        loop = asyncio.get_running_loop()
        found = self._loops.get(loop)
        if found is None:
            return
        members, task = found
        members.pop(key, None)
        if not members:
            task.cancel()
            del self._loops[loop]
