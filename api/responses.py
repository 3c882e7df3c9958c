"""Responses that hold a thread followed (api/follow.py) and let go of it when the server closes them.

A response's content is an async generator that closes what it follows in its `finally`; but a generator never
started never runs its `finally`, and a server may close a response it never sent: Django's own ASGI handler does
when the client leaves before the head went out. Closing the response lets go of the thread's group and its reader
in every case (`release`, which may run more than once: Following.close does)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from django.apps import apps
from django.http import StreamingHttpResponse

#: How long a response's close, on a server's thread, waits for the thread's group to be let go (Redis may be slow).
RELEASE_WAIT_S = 5.0


class Releasing(StreamingHttpResponse):
    """A streaming response that awaits `release` (on the event loop it was made on) when the server closes it."""

    def __init__(self, *args, release: Callable[[], Awaitable[None]], **kwargs):
        self._release: Callable[[], Awaitable[None]] | None = release
        self._loop = asyncio.get_running_loop()  # made by an async view, on the server's loop
        super().__init__(*args, **kwargs)

    def close(self) -> None:
        super().close()
        release, self._release = self._release, None
        if release is None or self._loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:  # closed on the loop itself: it cannot wait for its own work
            task = self._loop.create_task(release())
            releasing = apps.get_app_config("api").releasing  # kept by the app: the loop holds tasks weakly
            releasing.add(task)
            task.add_done_callback(releasing.discard)
            return
        # Closed on a server's thread (Django's and agentweb's handlers both close responses there).
        done = asyncio.run_coroutine_threadsafe(release(), self._loop)
        with contextlib.suppress(Exception):
            done.result(RELEASE_WAIT_S)


class SettledLater(Releasing):
    """Sent once `settle` gives its (status, body): agentweb's HTTP handler awaits `settle()` before it sends the head,
    with no thread held meanwhile and the wait given up when the client leaves (agentweb/http_handler.py). Under
    another server the body still comes, with the status 200. Closed unsent, it lets go of what `settle` would have
    read (`release`)."""

    def __init__(
        self, settle: Callable[[], Awaitable[tuple[int, bytes]]], *, release: Callable[[], Awaitable[None]], **kwargs
    ):
        self._settle = settle
        self._body: bytes | None = None
        super().__init__(self.settled_body(), content_type="application/json", release=release, **kwargs)

    async def settle(self) -> None:
        if self._body is None:
            self.status_code, self._body = await self._settle()

    async def settled_body(self):
        await self.settle()
        yield self._body
