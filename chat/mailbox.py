"""This process's address on the channel layer, and the loop that reads what other processes send to it.

With several processes (Daphne and `runworker`, sharing Redis), a run lives in exactly one of them. A
cancel, or a subscriber's request for the live state of a thread, may arrive at any other; they are sent
to the address the run's process wrote on its Run row (chat/runs.py), and handled here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from channels.layers import get_channel_layer

log = logging.getLogger("agentweb.mailbox")

Handler = Callable[[dict[str, Any]], Awaitable[None]]
_handlers: dict[str, Handler] = {}
_address: str | None = None
_reader: asyncio.Task | None = None
# Handlers running now: the loop keeps only weak references to tasks, so one could vanish mid-way.
_running: set[asyncio.Task] = set()
_lock = asyncio.Lock()


def handles(message_type: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        _handlers[message_type] = handler
        return handler

    return register


async def address() -> str:
    """This process's address; the first call opens it and starts reading it."""
    global _address, _reader
    if _address is not None and _reader is not None and not _reader.done():
        return _address
    async with _lock:
        if _address is None or _reader is None or _reader.done():
            layer = get_channel_layer()
            # The default prefix, as consumers' own channels have: channels-redis reads a process's
            # channels of one prefix through one receiver that holds a lock while it waits, so a second
            # prefix would never be read while a consumer of this process waits on the first.
            _address = await layer.new_channel()
            _reader = asyncio.get_running_loop().create_task(_read(layer, _address), name="agentweb-mailbox")
    return _address


def own_address() -> str | None:
    """This process's address if it has opened one (a process that never ran a run has none)."""
    return _address


async def send(to: str, message: dict[str, Any]) -> None:
    await get_channel_layer().send(to, message)


async def _read(layer, name: str) -> None:
    while True:
        try:
            message = await layer.receive(name)
        except asyncio.CancelledError:
            raise
        except Exception:  # Redis went away for a moment: keep the address, try again
            log.exception("reading this process's mailbox failed; retrying")
            await asyncio.sleep(1)
            continue
        handler = _handlers.get(message.get("type"))
        if handler is None:
            log.warning("mailbox message of unknown type %r dropped", message.get("type"))
            continue
        task = asyncio.get_running_loop().create_task(_handle(handler, message))
        _running.add(task)
        task.add_done_callback(_running.discard)


async def _handle(handler: Handler, message: dict[str, Any]) -> None:
    try:
        await handler(message)
    except Exception:
        log.exception("handling mailbox message %r failed", message.get("type"))
