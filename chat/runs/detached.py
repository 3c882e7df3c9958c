"""Work a view starts that outlives its request.

The app's middleware chain runs synchronously on a thread lent to the request (agentweb/http_handler.py), so an
async view runs inside asgiref's async_to_sync from that thread: whatever it awaits through sync_to_async (the
database) goes back to that thread, and so would a task it starts, after the request has ended and the thread is
gone ("CurrentThreadExecutor already quit"). A run, and a stream's reader, are started here in a context of their
own, as a websocket consumer's are: their database calls go where every run's go."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


async def detached(coroutine: Coroutine[Any, Any, T]) -> T:
    """Await `coroutine` in a fresh context: the tasks it starts do not belong to the request's lent thread."""
    return await asyncio.get_running_loop().create_task(coroutine, context=contextvars.Context())


def detached_view(view: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """`view`, its whole body run as `detached` does (the request's lent thread waits for it meanwhile); a view
    cancelled (its client gone) cancels its body."""

    @functools.wraps(view)
    async def run_detached(*args: P.args, **kwargs: P.kwargs) -> T:
        task = asyncio.get_running_loop().create_task(view(*args, **kwargs), context=contextvars.Context())
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise

    return run_detached
