"""Coalesce streaming deltas into few frames.

A fast model server sends thousands of tokens a second; a browser needs at most one frame per display refresh.
Each stream (a message's text, a tool call's arguments) sends its first piece at once and then at most one frame
per `window` seconds, carrying everything that arrived meanwhile.

A frame is queued with the event log as soon as it may go (delivery/log.py, publish_later) and takes its text when
it goes out to Redis: what arrives while it waits there joins it. So a stream has at most one frame waiting, and the
reader of the model's stream never waits for a send. Beside 200 streams a frame waits for the worker's publish in
flight: earlier, a stream's next frame started only once its last one had been answered, and the window counted from
then, so a token waited for a whole round trip and a window before its own (docs/performance.md, P28 and P29).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable

#: A frame's text, taken when the frame goes out ("" when a flush took it before).
Take = Callable[[], str]
#: Queues the stream's frame now, behind everything queued before it; `take` gives its text when it goes out.
Send = Callable[[Hashable, Take], Awaitable[None]]


class DeltaCoalescer:
    def __init__(self, send: Send, *, window: float = 0.016):
        self._send = send
        self._window = window
        # Each stream's next frame, until it goes out: queued with the log, or waiting for the window (its timer).
        self._open: dict[Hashable, list[str]] = {}
        self._timers: dict[Hashable, asyncio.TimerHandle] = {}
        self._last_taken: dict[Hashable, float] = {}
        self._in_flight: set[Awaitable[None]] = set()
        self._failed: BaseException | None = None

    async def push(self, key: Hashable, text: str) -> None:
        self._raise_failure()
        if not text:
            return
        pieces = self._open.get(key)
        if pieces is not None:
            pieces.append(text)
            return
        self._open[key] = [text]
        last = self._last_taken.get(key)
        delay = 0.0 if last is None else last + self._window - time.monotonic()
        if delay <= 0:
            self._queue(key)
        else:
            self._timers[key] = asyncio.get_running_loop().call_later(delay, self._on_timer, key)

    async def flush(self) -> None:
        """Send everything pending now, and wait until it has gone (before an event that must come after these
        deltas)."""
        for key in list(self._timers):
            self._timers.pop(key).cancel()
            self._queue(key)
        while self._in_flight:
            await asyncio.gather(*self._in_flight, return_exceptions=True)
        self._raise_failure()

    def forget(self, key: Hashable) -> None:
        """The stream `key` has ended (call flush first)."""
        self._last_taken.pop(key, None)

    def close(self) -> None:
        """The run has ended: no timer is left, and `send` is let go. It is the recorder's bound method, and the
        recorder holds this coalescer: kept, the two (and the run's text) would wait in a reference cycle for a
        garbage collection, which a worker makes rare (agentweb/tuning.py)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._send = _closed

    def _on_timer(self, key: Hashable) -> None:
        del self._timers[key]
        self._queue(key)

    def _queue(self, key: Hashable) -> None:
        def take() -> str:
            pieces = self._open.pop(key, None)
            self._last_taken[key] = time.monotonic()
            return "".join(pieces) if pieces else ""

        sent = asyncio.ensure_future(self._send(key, take))
        self._in_flight.add(sent)
        sent.add_done_callback(self._landed)

    def _landed(self, sent: asyncio.Future) -> None:
        self._in_flight.discard(sent)
        if not sent.cancelled() and sent.exception() is not None and self._failed is None:
            self._failed = sent.exception()  # raised to the stream's reader at its next piece

    def _raise_failure(self) -> None:
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed


def _closed(key: Hashable, take: Take) -> Awaitable[None]:
    raise RuntimeError(f"a piece of {key!r} came after its coalescer was closed")
