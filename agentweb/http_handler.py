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
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext
from django.utils.functional import cached_property

from agentweb.adapters.django import ASGIHandlerInOneTrip, BodyTooLarge
from agentweb.request_limits import RequestLimits

__all__ = ["BodyTooLarge", "PooledThreadASGIHandler", "ThreadLender"]


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


class PooledThreadASGIHandler(ASGIHandlerInOneTrip):
    """Django's ASGI handler, each request in one trip (agentweb/adapters/django.py) to a thread lent from a pool."""

    def __init__(self, threads: int) -> None:
        super().__init__()
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

    @cached_property
    def request_limits(self) -> RequestLimits:
        return RequestLimits.from_settings()

    def body_limit(self, scope) -> int:
        return self.request_limits.body_limit(scope.get("path", ""))

    def body_refusal(self, scope) -> dict:
        return self.request_limits.refusal_body(scope.get("path", ""))
