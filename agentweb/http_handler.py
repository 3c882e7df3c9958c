"""Django's ASGI handler, with the synchronous part of each request on a thread lent from a pool.

Django's own handler runs each request's synchronous code (middleware, view, the request signals) on a thread
made for that request alone, and asgiref joins it afterwards from yet another new thread. So every page view
started two threads and opened a database connection of its own (connections are per thread), and under load
each of those steps waited its turn for the CPU and the GIL: page views took 50 to 100 ms at the 99th percentile
beside fifty streaming answers, of which a few were the view itself.

Here a request borrows one of a few long-lived threads, each keeping its database connection (SQLite: a
persistent connection; PostgreSQL: the pool's) from one request to the next, as a threaded WSGI server's
workers do. A request still has its thread to itself while it runs, which is what Django's thread-sensitive
mode asks for; when all threads are lent, the next request waits for one. Why it is kept rather than Django's
own handler: docs/performance.md, "What we keep and why".

A body over its route's limit (agentweb/request_limits.py) is refused here too, as it is read: agentweb.serve refuses it
before it reaches the app, but `manage.py runserver` and other ASGI servers hand the app whatever they were sent.

And a request makes one trip to that thread, not Django's three or four: the request signal, the middleware chain
(built synchronous, as a WSGI server's), the view and the response's close all run there at once; only the body's
read and the response's send stay on the event loop. Under load each trip back had waited for the loop's turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.signals import request_started
from django.http import FileResponse, HttpResponseBase, JsonResponse
from django.urls import set_script_prefix
from django.utils.functional import cached_property

from agentweb.request_limits import RequestLimits


class BodyTooLarge(Exception):
    """A request's body, announced or as read so far, is over its route's limit; the message says so."""


class ThreadLender:
    """Up to `size` single-thread executors, made as needed and kept; lent to one request at a time."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._idle: deque[ThreadPoolExecutor] = deque()
        self._made = 0
        self._waiters: deque[asyncio.Future[ThreadPoolExecutor]] = deque()

    async def borrow(self) -> ThreadPoolExecutor:
        if self._idle:
            return self._idle.pop()  # the most recently used: its connection is the least likely to be stale
        if self._made < self.size:
            self._made += 1
            return ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentweb-http")
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give_back(waiter.result())  # lent at the moment the request gave up
            raise

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(executor)
                return
        self._idle.append(executor)


class PooledThreadASGIHandler(ASGIHandler):
    """Each request in one trip to its lent thread: Django's ASGI handler made 3 or 4 (the request signal, the
    middleware, the view inside the async part of the middleware chain, the response's close), and under load each
    trip back waited for the event loop's turn (docs/performance.md, P34)."""

    def __init__(self, threads: int) -> None:
        super().__init__()
        # The middleware chain as a WSGI server runs it: every middleware and the view in the calling thread.
        self.load_middleware(is_async=False)
        self.lender = ThreadLender(threads)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor = await self.lender.borrow()
        lent = True
        try:
            async with ThreadSensitiveContext(executor=executor):
                response = await self.handle(scope, receive, send)
            if response is not None and response.streaming and response.is_async:
                # An event stream (the API's) lasts as long as its reader: the lent thread goes back first, and the
                # stream stops when its reader leaves.
                self.lender.give_back(executor)
                lent = False
                await self.send_until_disconnect(response, receive, send)
        finally:
            if lent:
                self.lender.give_back(executor)

    async def handle(self, scope, receive, send):
        """As Django's, less its watch for a disconnect while the view runs: a view in a thread cannot be stopped.
        Returns a response whose content is an async iterator unsent (__call__ sends it); None once all is sent."""
        try:
            body_file = await self.read_limited_body(scope, receive)
        except RequestAborted:
            return None
        except BodyTooLarge as refused:
            await self.send_response(JsonResponse({"error": str(refused)}, status=413), send)
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

    @cached_property
    def request_limits(self) -> RequestLimits:
        return RequestLimits.from_settings()

    async def read_limited_body(self, scope, receive):
        """Django's read_body, refusing a body whose Content-Length, or whose length read so far, passes its
        route's limit (BodyTooLarge) before more of it is read."""
        path = scope.get("path", "")
        limit = self.request_limits.body_limit(path)
        declared = next((value for name, value in scope.get("headers", ()) if name == b"content-length"), b"")
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge(self.request_limits.refusal(path))
        received = 0

        async def counted():
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge(self.request_limits.refusal(path))
            return message

        return await self.read_body(counted)

    def respond(self, scope, body_file) -> HttpResponseBase:
        """On the lent thread: the request signal, the middleware and view, and (unless the content streams) the
        response's close, whose signal gives the database connection back."""
        request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size  # the server chunks the body itself
        if not response.streaming:
            response.close()
        return response
