"""GET /api/v1/threads/{id}/events: a thread's events as Server-Sent Events (docs/api.md).

Each event is the websocket's own (docs/protocol.md), as api/follow.py gives it: `id: <seq>` (none for the few
events without a number), `event: <type>`, `data: <its JSON text>`. A client that reconnects with `Last-Event-ID`
(or `?after_seq=`) gets what a reconnecting tab gets: the events after that number while the thread's log still
holds them, else a snapshot and what follows. While nothing comes, a comment line every AGENTWEB_SSE_KEEPALIVE
seconds keeps proxies from closing the connection and lets the server notice a client that left.

The response streams from an async generator: agentweb/http_handler.py gives the request's lent thread back before
it sends it and closes the generator when the client disconnects, which lets go of the thread's group."""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from django.conf import settings
from django.http import StreamingHttpResponse
from ninja import Query

from chat.models import Thread
from chat.runs.detached import detached_view

from .follow import Sent, follow
from .run_api import ApiError, api
from .run_views import ERRORS, owned_thread
from .stream_cap import TOO_MANY_STREAMS, TOO_MANY_STREAMS_MESSAGE, at_cap, counted

KEEP_ALIVE = b": keep-alive\n\n"
#: A Last-Event-ID longer than this is not a number of ours.
MAX_SEQ_DIGITS = 19


def sse_bytes(sent: Sent) -> bytes:
    """One event as its SSE lines. The JSON text is one line (json.dumps escapes every line break in it)."""
    head = f"id: {sent.seq}\n" if sent.seq is not None else ""
    return f"{head}event: {sent.type}\ndata: {sent.text}\n\n".encode()


def resume_point(request, after_seq: int | None) -> int | None:
    """The number the client last got: the Last-Event-ID header (what an EventSource sends when it reconnects)
    before `?after_seq=`; None: from a snapshot."""
    header = request.headers.get("Last-Event-ID", "").strip()
    if not header:
        return after_seq
    if len(header) > MAX_SEQ_DIGITS or not header.isdigit():
        raise ApiError("bad_request", "Last-Event-ID: an event's id (a number) was expected.")
    return int(header)


@api.get(
    "/threads/{thread_id}/events",
    response={200: None, **ERRORS},
    tags=["threads"],
    openapi_extra={
        "responses": {
            200: {
                "description": "Server-Sent Events: `id: <seq>`, `event: <type>`, `data: <the event's JSON>`.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        }
    },
)
@detached_view
async def thread_events(request, thread_id: str, after_seq: int | None = Query(None, ge=0)):
    """Follow the thread: its events, as a chat tab gets them, for as long as the client reads. Resume with the
    `Last-Event-ID` header (or `after_seq`): the events after it, or a snapshot when they are no longer kept."""
    thread = await owned_thread(request, thread_id, "thread.subscribe")
    after = resume_point(request, after_seq)
    user_id = request.auth.user_id
    # A stream counts as one of the person's sockets (AGENTWEB_MAX_SOCKETS_PER_USER): many held open are refused.
    if at_cap(user_id):
        raise ApiError(TOO_MANY_STREAMS, TOO_MANY_STREAMS_MESSAGE)
    response = StreamingHttpResponse(counted(user_id, stream(thread, after)), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on as it comes
    return response


async def stream(thread: Thread, after_seq: int | None) -> AsyncIterator[bytes]:
    """The thread's events as SSE, a keep-alive comment whenever none has come for AGENTWEB_SSE_KEEPALIVE seconds."""
    followed = follow(thread, after_seq)
    keepalive = settings.AGENTWEB_SSE_KEEPALIVE
    pending: asyncio.Future | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(followed))
            done, _ = await asyncio.wait({pending}, timeout=keepalive)
            if not done:
                yield KEEP_ALIVE
                continue
            sent, pending = pending.result(), None
            yield sse_bytes(sent)
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
        await followed.aclose()
