"""Run an async view's body in a context of its own, as a websocket consumer's handlers run.

Under agentweb/http_handler.py an async view runs through async_to_sync from the request's lent thread, and the
context it runs in names that thread's executor as where thread-sensitive calls go. A task the view starts (a run,
chat/runs/start.py; a delivery's reader) copies that context and would send its database calls to an executor that
has quit once the view returned ("CurrentThreadExecutor already quit"). A fresh context sends them where the
websocket's go: Django's one thread for thread-sensitive calls (channels' database_sync_to_async)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def detached(view: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """`view`, its body run as a task in an empty context (the request's lent thread waits for it meanwhile)."""

    @functools.wraps(view)
    async def run_detached(*args: P.args, **kwargs: P.kwargs) -> T:
        task = asyncio.get_running_loop().create_task(view(*args, **kwargs), context=contextvars.Context())
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise

    return run_detached
