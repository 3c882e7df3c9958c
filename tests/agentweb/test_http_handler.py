"""Page views on kept threads (agentweb/http_handler.py): one request at a time per thread, the same thread (and
so the same database connection) from one request to the next, and a request beyond the limit waits."""

import asyncio
import threading

from asgiref.testing import ApplicationCommunicator
from django.core.handlers.asgi import ASGIHandler
from django.core.signals import request_started

from agentweb.http_handler import PooledThreadASGIHandler, ThreadLender


def scope(path: str) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def get(app, path: str = "/accounts/login/") -> int:
    communicator = ApplicationCommunicator(app, scope(path))
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(10)
    await communicator.receive_output(10)  # the body
    await communicator.wait(10)
    return start["status"]


async def threads_of_requests(app, count: int) -> list[threading.Thread]:
    seen = []

    def note_thread(**_):
        seen.append(threading.current_thread())  # the objects are kept, so no two threads can look alike

    request_started.connect(note_thread)
    try:
        for _ in range(count):
            assert await get(app) == 200
    finally:
        request_started.disconnect(note_thread)
    return seen


async def test_page_views_one_after_another_run_on_the_same_kept_thread():
    seen = await threads_of_requests(PooledThreadASGIHandler(threads=4), 5)
    assert len(seen) == 5
    assert len(set(seen)) == 1
    assert threading.current_thread() not in seen  # never on the event loop's thread


async def test_djangos_own_handler_made_a_thread_per_request():
    """What the pool replaces (and what makes the test above able to fail)."""
    seen = await threads_of_requests(ASGIHandler(), 3)
    assert len(set(seen)) == 3


async def test_requests_at_once_get_threads_of_their_own():
    lender = ThreadLender(2)
    first, second = await lender.borrow(), await lender.borrow()
    assert first.submit(threading.current_thread).result() is not second.submit(threading.current_thread).result()


async def test_a_request_beyond_the_limit_waits_for_a_thread_given_back():
    lender = ThreadLender(1)
    only = await lender.borrow()
    waiting = asyncio.ensure_future(lender.borrow())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    lender.give_back(only)
    assert await asyncio.wait_for(waiting, 1) is only


async def test_a_request_that_gives_up_waiting_loses_no_thread():
    lender = ThreadLender(1)
    only = await lender.borrow()
    waiting = asyncio.ensure_future(lender.borrow())
    await asyncio.sleep(0.01)
    waiting.cancel()
    await asyncio.sleep(0)
    lender.give_back(only)
    assert await asyncio.wait_for(lender.borrow(), 1) is only
