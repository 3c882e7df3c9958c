"""Page views on kept threads (agentweb/http_handler.py): one request at a time per thread, the same thread (and
so the same database connection) from one request to the next, each request in one trip to it, and a request beyond
the limit waits."""

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from asgiref.sync import ThreadSensitiveContext
from asgiref.testing import ApplicationCommunicator
from django.core.handlers.asgi import ASGIHandler
from django.core.signals import request_finished, request_started

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
    status, _ = await get_with_body(app, path)
    return status


async def get_with_body(app, path: str) -> tuple[int, bytes]:
    communicator = ApplicationCommunicator(app, scope(path))
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(10)
    body = b""
    while True:
        message = await communicator.receive_output(10)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await communicator.wait(10)
    return start["status"], body


class CountedExecutor(ThreadPoolExecutor):
    """One thread, counting the work sent to it: each is a trip from the event loop and back."""

    def __init__(self):
        super().__init__(max_workers=1)
        self.trips = 0

    def submit(self, fn, /, *args, **kwargs):
        self.trips += 1
        return super().submit(fn, *args, **kwargs)


def handler_lending(executor: ThreadPoolExecutor) -> PooledThreadASGIHandler:
    handler = PooledThreadASGIHandler(threads=1)
    handler.lender.give_back(executor)  # lent first, before any thread of its own is made
    return handler


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


async def test_a_page_view_is_one_trip_from_the_event_loop_to_its_thread_and_back():
    executor = CountedExecutor()

    assert await get(handler_lending(executor)) == 200
    assert executor.trips == 1


async def test_djangos_own_handler_made_several_trips_on_the_same_thread():
    """What the one trip replaces: each was a wait for the event loop's turn under load."""
    executor = CountedExecutor()
    django_handler = ASGIHandler()

    async def before(scope, receive, send):  # this handler as it was: Django's handle() on a lent thread
        async with ThreadSensitiveContext(executor=executor):
            await django_handler.handle(scope, receive, send)

    assert await get(before) == 200
    assert executor.trips >= 3


async def test_a_page_view_is_finished_on_its_thread_before_its_response_is_sent():
    """request_finished gives the request's database connection back: on the thread that used it."""
    finished_on = []

    def note_thread(**_):
        finished_on.append(threading.current_thread())

    request_finished.connect(note_thread)
    try:
        seen = await threads_of_requests(PooledThreadASGIHandler(threads=1), 1)
    finally:
        request_finished.disconnect(note_thread)
    assert finished_on == seen


@pytest.mark.urls("tests.agentweb.handler_urls")
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")  # Django's, for any file served over ASGI
async def test_a_download_is_sent_whole_then_its_file_closed():
    from tests.agentweb.handler_urls import FILES

    FILES.clear()
    status, body = await get_with_body(PooledThreadASGIHandler(threads=1), "/download/")

    assert status == 200
    assert body == b"x" * 200_000
    assert [handle.closed for handle in FILES] == [True]


@pytest.mark.urls("tests.agentweb.handler_urls")
async def test_a_view_that_fails_gets_the_500_page(caplog):
    status, body = await get_with_body(PooledThreadASGIHandler(threads=1), "/fails/")

    assert status == 500
    assert b"Something went wrong" in body and b"a bug in a view" not in body


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


def post_scope(path: str, *headers: tuple[bytes, bytes]) -> dict:
    return {**scope(path), "method": "POST", "headers": [(b"host", b"127.0.0.1"), *headers]}


async def test_a_body_announced_over_its_routes_limit_is_refused_before_it_is_read():
    """Under an ASGI server that is not agentweb.serve (runserver), which hands the app whatever it was sent."""
    communicator = ApplicationCommunicator(
        PooledThreadASGIHandler(threads=1), post_scope("/accounts/login/", (b"content-length", b"1000000000"))
    )
    await communicator.send_input({"type": "http.request", "body": b"x" * 65536, "more_body": True})

    start = await communicator.receive_output(10)
    body = await communicator.receive_output(10)

    assert start["status"] == 413
    assert json.loads(body["body"]) == {"error": "The request is too big: at most 1.0 MB may be sent here."}


async def test_a_body_read_past_its_routes_limit_is_refused_there():
    communicator = ApplicationCommunicator(PooledThreadASGIHandler(threads=1), post_scope("/accounts/login/"))
    for _ in range(17):  # 17 pieces of 64 KiB: past 1 MiB with the last
        await communicator.send_input({"type": "http.request", "body": b"x" * 65536, "more_body": True})

    start = await communicator.receive_output(10)

    assert start["status"] == 413
