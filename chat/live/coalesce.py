"""Coalesce streaming deltas into few frames.

A fast model server sends thousands of tokens a second; a browser needs at most one frame per
display refresh. Each stream (a message's text, a tool call's arguments) sends its first piece at
once and then at most one frame per `window` seconds, carrying everything that arrived meanwhile.

The window counts from when a frame has gone out (its send returned), and no frame starts while another is
being sent: what arrives meanwhile waits for the next one. A send slower than the window (a busy Redis, a busy
worker) then makes frames bigger, never more of them. Counted from when a send started, every piece that came
after a slow send went out alone, and the reader waited for it: each stream moved one piece per round trip, and
beside 200 streams the round trips grew until the streams ran seconds late (docs/performance.md, P28).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable

Send = Callable[[Hashable, str], Awaitable[None]]


class DeltaCoalescer:
    def __init__(self, send: Send, *, window: float = 0.016):
        self._send = send
        self._window = window
        self._pending: dict[Hashable, list[str]] = {}
        self._last_sent: dict[Hashable, float] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._flush_task: asyncio.Task | None = None
        # A timer's flush and an explicit flush must not interleave, or a later event could overtake a delta.
        self._lock = asyncio.Lock()

    async def push(self, key: Hashable, text: str) -> None:
        if not text:
            return
        pending = self._pending.get(key)
        if pending is not None:
            pending.append(text)
            return
        last = self._last_sent.get(key)
        now = time.monotonic()
        if (last is None or now - last >= self._window) and not self._lock.locked():
            async with self._lock:
                await self._send(key, text)
                self._last_sent[key] = time.monotonic()
            return
        self._pending[key] = [text]
        self._schedule(0.0 if last is None else last + self._window - now)

    async def flush(self) -> None:
        """Send everything pending now (before an event that must come after these deltas)."""
        async with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            pending, self._pending = self._pending, {}
            for key, pieces in pending.items():
                await self._send(key, "".join(pieces))
                self._last_sent[key] = time.monotonic()

    def forget(self, key: Hashable) -> None:
        """The stream `key` has ended (call flush first)."""
        self._last_sent.pop(key, None)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self, delay: float) -> None:
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(max(delay, 0.0), self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._flush_task = asyncio.ensure_future(self.flush())
