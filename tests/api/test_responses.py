"""api/responses.py: a /v1 response that holds a thread followed lets go of it when the server closes it, even when
it was never sent (a client gone before the head: Django's own ASGI handler then closes it unsent), so that no
reader task and no group membership outlives the request."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from asgiref.sync import sync_to_async

from api.follow import Following
from api.responses import Releasing, SettledLater
from chat import live
from delivery import group_name

# Closing a response sends Django's request_finished, whose receiver closes old database connections.
pytestmark = pytest.mark.django_db


def members(thread_id: uuid.UUID) -> dict:
    return live.delivery().layer.groups.get(group_name(thread_id), {})


def readers() -> list[asyncio.Task]:
    return [task for task in asyncio.all_tasks() if "Following._read" in repr(task.get_coro())]


async def test_a_settled_later_response_closed_unsent_lets_go_of_the_thread():
    thread_id = uuid.uuid4()
    following = await Following(thread_id).open()
    assert len(members(thread_id)) == 1 and len(readers()) == 1

    async def never_read() -> tuple[int, bytes]:
        raise AssertionError("the client left: the answer is never read")

    response = SettledLater(never_read, release=following.close)
    await sync_to_async(response.close, thread_sensitive=True)()  # as Django's handler closes it, on a thread

    assert members(thread_id) == {}
    assert readers() == []


async def test_a_stream_closed_unsent_lets_go_of_the_thread_and_closing_again_does_nothing():
    thread_id = uuid.uuid4()
    following = await Following(thread_id).open()

    async def body():
        yield b"never sent"

    response = Releasing(body(), content_type="text/event-stream", release=following.close)
    response.close()  # on the loop itself: the release is started there
    await asyncio.sleep(0.05)
    assert members(thread_id) == {} and readers() == []
    response.close()
    await following.close()
    assert members(thread_id) == {}
