"""What agentweb relies on inside Django's ASGI handler (django.core.handlers.asgi.ASGIHandler), pinned in
requirements.txt and checked by tests/agentweb/adapters/test_django.py.

`ASGIHandlerInOneTrip`: Django's handler whose request is handled in one trip to the thread that runs it, its steps
(`read_body`, `create_request`, `get_response`, `send_response`) called as Django's own `handle` calls them. Django's
handler makes three or four trips (the request signal, the middleware, the view inside the async part of the
middleware chain, the response's close), and under load each trip back waited for the event loop's turn
(docs/performance.md, P34). agentweb/http_handler.py gives it its threads and its body limit.

Buys (docs/performance.md, "Library reach-ins measured again", piece 9; to confirm on a quiet machine): page p99
beside fifty streams 22 to 31 % lower in each pair.
"""

from __future__ import annotations

import asyncio
import contextlib

from asgiref.sync import sync_to_async
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.signals import request_started
from django.http import FileResponse, HttpResponseBase, JsonResponse
from django.urls import set_script_prefix


class BodyTooLarge(Exception):
    """A request's body, announced or as read so far, is over its route's limit; `body` is the 413's JSON."""

    def __init__(self, body: dict):
        super().__init__(body)
        self.body = body


class ASGIHandlerInOneTrip(ASGIHandler):
    """Django's ASGI handler, each request's synchronous part (the request signal, the middleware and view, the
    response's close) in one trip to the thread that runs it. The subclass says how long a body may be
    (`body_limit`, `body_refusal`)."""

    def __init__(self) -> None:
        super().__init__()
        # The middleware chain as a WSGI server runs it: every middleware and the view in the calling thread.
        self.load_middleware(is_async=False)

    def body_limit(self, scope) -> int:
        """The most bytes the request's body may have."""
        raise NotImplementedError

    def body_refusal(self, scope) -> dict:
        """What a request whose body has more is answered (413): its JSON body."""
        raise NotImplementedError

    async def handle(self, scope, receive, send):
        """As Django's, less its watch for a disconnect while the view runs: a view in a thread cannot be stopped.
        Returns a response whose content is an async iterator, unsent (send_until_disconnect sends it, with no thread
        held); None once all is sent."""
        try:
            body_file = await self.read_limited_body(scope, receive)
        except RequestAborted:
            return None
        except BodyTooLarge as refused:
            await self.send_response(JsonResponse(refused.body, status=413), send)
            return None
        set_script_prefix(get_script_prefix(scope))
        try:
            response = await sync_to_async(self.respond, thread_sensitive=True)(scope, body_file)
            if response.streaming and response.is_async:
                return response
            try:
                await self.send_response(response, send)
            finally:
                if response.streaming:  # its content (a file, say) was open until sent
                    await sync_to_async(response.close, thread_sensitive=True)()
        finally:
            body_file.close()
        return None

    async def send_until_disconnect(self, response, receive, send) -> None:
        """Send an async-streaming response until it ends or its client disconnects (its iterator is then closed, so
        that whatever it follows is let go), as Django's own handler does."""
        sending = asyncio.ensure_future(self.settle_and_send(response, send))
        listening = asyncio.ensure_future(self.listen_for_disconnect(receive))
        try:
            await asyncio.wait([sending, listening], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (listening, sending):
                task.cancel()
            for task in (listening, sending):
                with contextlib.suppress(asyncio.CancelledError, RequestAborted, OSError):
                    await task
            await sync_to_async(response.close, thread_sensitive=False)()

    async def settle_and_send(self, response, send) -> None:
        """A response whose head waits for its content (api/responses.py SettledLater: a run's whole answer) is
        settled first: its status is known only then."""
        settle = getattr(response, "settle", None)
        if settle is not None:
            await settle()
        await self.send_response(response, send)

    async def read_limited_body(self, scope, receive):
        """Django's read_body, refusing a body whose Content-Length, or whose length read so far, passes its
        route's limit (BodyTooLarge) before more of it is read."""
        limit = self.body_limit(scope)
        declared = next((value for name, value in scope.get("headers", ()) if name == b"content-length"), b"")
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge(self.body_refusal(scope))
        received = 0

        async def counted():
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge(self.body_refusal(scope))
            return message

        return await self.read_body(counted)

    def respond(self, scope, body_file) -> HttpResponseBase:
        """On the request's thread: the request signal, the middleware and view, and (unless the content streams)
        the response's close, whose signal gives the database connection back."""
        request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size  # the server chunks the body itself
        if not response.streaming:
            response.close()
        return response
