"""The threads sync tools run in: a bounded pool of their own, and a share of it per tool.

A thread cannot be killed: a sync tool that hangs keeps its thread after its timeout, until it returns. In
asyncio's default pool (6 threads on a 2-core machine) a few hanging calls took every thread, and with them
every other user's tools and fetch_url's DNS lookups, which run there too. Here:

- sync tools run in `AGENTWEB_TOOL_THREADS` threads of their own, never in asyncio's default pool (DNS
  lookups) nor in the ORM's threads;
- one tool runs in at most `AGENTWEB_TOOL_THREADS_PER_TOOL` of them at a time. Its further calls wait for
  one of its own threads, within their timeout, and a thread taken by a call stays counted until the call
  really returns, not when the caller gave up on it. A hanging tool exhausts its own share only;
- `stuck()` lists the tools whose calls are still running past their timeout (the admin's Code tools page
  shows it: these calls hold threads and should be looked into).

Plain Python, no Django: tools/apps.py configures the sizes from the settings.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

__all__ = ["TOOL_THREADS", "StuckCalls", "ToolThreads"]

logger = logging.getLogger("agentweb.tools")

DEFAULT_THREADS = 16
DEFAULT_PER_TOOL = 4


@dataclass(frozen=True)
class _Running:
    tool: str
    started: float  # time.monotonic()
    timeout: float | None


@dataclass(frozen=True)
class StuckCalls:
    """The calls of one tool still running past their timeout."""

    tool: str
    calls: int
    timeout: float | None
    #: Seconds the oldest of them has been running.
    oldest: float


class ToolThreads:
    """A pool of threads for sync tools, each tool limited to its share. Safe to use from several event loops."""

    def __init__(self, threads: int = DEFAULT_THREADS, per_tool: int = DEFAULT_PER_TOOL) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._executor: ThreadPoolExecutor | None = None
        self._busy: Counter[str] = Counter()  # threads taken (or promised) per tool
        self._waiting: dict[str, deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        self._running: dict[int, _Running] = {}
        self.threads = self.per_tool = 0
        self.configure(threads=threads, per_tool=per_tool)

    def configure(self, *, threads: int, per_tool: int) -> None:
        """Set the sizes. Calls already running keep their threads; new ones use a pool of the new size."""
        if threads < 1:
            raise ValueError(f"AGENTWEB_TOOL_THREADS must be at least 1, not {threads}")
        if per_tool < 1:
            raise ValueError(f"AGENTWEB_TOOL_THREADS_PER_TOOL must be at least 1, not {per_tool}")
        with self._lock:
            old, self._executor = self._executor, None
            self.threads, self.per_tool = threads, min(per_tool, threads)
        if old is not None:
            old.shutdown(wait=False)

    async def run(
        self, tool: str, timeout: float | None, func: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> Any:
        """`func(*args, **kwargs)` in one of `tool`'s threads, once one is free; with the caller's contextvars."""
        await self._take(tool)
        try:
            future = self._pool().submit(contextvars.copy_context().run, func, *args, **kwargs)
        except BaseException:
            self._give_back(tool)
            raise
        with self._lock:
            self._running[id(future)] = _Running(tool, time.monotonic(), timeout)
        future.add_done_callback(lambda done: self._finished(done, tool))
        return await asyncio.wrap_future(future)

    def busy(self, tool: str) -> int:
        """Threads `tool` holds now, its calls that gave up included."""
        with self._lock:
            return self._busy[tool]

    def stuck(self) -> list[StuckCalls]:
        """Per tool, the calls still running longer than their timeout, oldest first."""
        now = time.monotonic()
        found: dict[str, list[_Running]] = {}
        with self._lock:
            for call in self._running.values():
                if call.timeout is not None and now - call.started > call.timeout:
                    found.setdefault(call.tool, []).append(call)
        entries = [
            StuckCalls(tool, len(calls), calls[0].timeout, now - min(c.started for c in calls))
            for tool, calls in found.items()
        ]
        return sorted(entries, key=lambda entry: -entry.oldest)

    def wait_idle(self, tool: str, timeout: float | None = None) -> bool:
        """Block until `tool` holds no thread (for tests and shutdown); False if `timeout` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._busy[tool], timeout)

    # --- the share of each tool ------------------------------------------------------------------

    async def _take(self, tool: str) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._busy[tool] < self.per_tool and not self._waiting.get(tool):
                self._busy[tool] += 1
                return
            promised: asyncio.Future[None] = loop.create_future()
            self._waiting.setdefault(tool, deque()).append((loop, promised))
        try:
            await promised
        except asyncio.CancelledError:
            with self._lock:
                queue = self._waiting.get(tool, deque())
                if (loop, promised) in queue:
                    queue.remove((loop, promised))
                    raise
            if promised.done() and not promised.cancelled():  # handed a thread just before the cancellation
                self._give_back(tool)
            raise  # else the hand-over, still to run, sees the cancellation and passes the thread on

    def _give_back(self, tool: str) -> None:
        """One of `tool`'s threads is free: to the next call waiting for one (on its own loop), else released."""
        with self._lock:
            queue = self._waiting.get(tool)
            while queue:
                loop, promised = queue.popleft()
                try:
                    loop.call_soon_threadsafe(self._hand_over, tool, promised)
                    return
                except RuntimeError:  # that loop is closed: its caller is gone
                    continue
            self._busy[tool] -= 1
            if not self._busy[tool]:
                del self._busy[tool]
                self._idle.notify_all()

    def _hand_over(self, tool: str, promised: asyncio.Future[None]) -> None:
        if promised.done():  # the waiting call gave up meanwhile
            self._give_back(tool)
        else:
            promised.set_result(None)

    def _finished(self, future: Future[Any], tool: str) -> None:
        with self._lock:
            call = self._running.pop(id(future), None)
        if call is not None and call.timeout is not None:
            late = time.monotonic() - call.started - call.timeout
            if late > 0:
                logger.warning("Tool %s: a call returned %.1f s after its %g s timeout", tool, late, call.timeout)
        self._give_back(tool)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="agentweb-tool")
            return self._executor


#: The process's pool for sync tools (tools/executor.py): one per process, as its size is the process's limit (set
#: by tools/apps.py from the settings); kept here because the executor is plain Python, with no app to ask.
TOOL_THREADS = ToolThreads()
