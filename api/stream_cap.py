"""An API stream counts as one of its person's sockets (AGENTWEB_MAX_SOCKETS_PER_USER, chat/socket_cap.py), on both
APIs: a run API event stream (api/run_events.py) and a streamed /v1 completion (api/openai_views.py). Many held
open are refused before anything is written, with the same code and message on each API, in each API's shape."""

from __future__ import annotations

from collections.abc import AsyncIterator

from django.conf import settings

from chat.socket_cap import sockets

#: The refusal's code (429, api/errors.py) and message, the same on both APIs.
TOO_MANY_STREAMS = "too_many_streams"
TOO_MANY_STREAMS_MESSAGE = "Too many open connections; close some and try again."


def at_cap(user_id: int) -> bool:
    """Whether the person holds as many sockets as they may already (then a new stream is refused)."""
    cap = settings.AGENTWEB_MAX_SOCKETS_PER_USER
    return bool(cap) and sockets().held(user_id) >= cap


async def counted(user_id: int, events: AsyncIterator) -> AsyncIterator:
    """`events`, counted among the person's sockets from its first event until it ends, however it ends (counted
    here, not in the view: a generator never started never runs its `finally`)."""
    counts = sockets().open(user_id, settings.AGENTWEB_MAX_SOCKETS_PER_USER)
    try:
        async for chunk in events:
            yield chunk
    finally:
        await events.aclose()
        if counts:
            sockets().close(user_id)
