"""What reaches the real Daphne's /ws/chat/ from outside the page: other origins and oversized messages."""

import asyncio
import json
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.support.processes import Daphne, app_environment, create_user, free_port, log_in, manage
from tests.support.sockets import ChatSocket

LIMIT = 256 * 1024  # AGENTWEB_MAX_FRAME_BYTES's default


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    env = app_environment(tmp_path_factory.mktemp("edges"))
    manage(env, "migrate", "--noinput")
    create_user(env, "ada", "lovelace-1815")
    server = Daphne(env).start()
    try:
        yield server, log_in(server.url, "ada", "lovelace-1815")
    finally:
        server.stop()


def open_from(server, cookie: str, origin: str):
    """The socket a page served from `origin` would open, with the person's cookie (browsers send it)."""
    return connect(
        server.url.replace("http://", "ws://") + "/ws/chat/",
        additional_headers={"Cookie": cookie},
        origin=origin,
        max_size=None,
    )


async def ping(connection) -> dict:
    await connection.send(json.dumps({"type": "ping"}))
    return json.loads(await asyncio.wait_for(connection.recv(), 30))


def test_the_app_s_own_page_opens_the_socket(app):
    server, cookie = app

    async def from_own_page():
        async with open_from(server, cookie, server.url) as connection:
            return await ping(connection)

    assert asyncio.run(from_own_page()) == {"type": "pong"}


@pytest.mark.parametrize("other", ["another port", "another scheme", "another allowed host name"])
def test_a_page_of_another_origin_cannot_open_the_socket(app, other):
    server, cookie = app
    origin = {
        "another port": f"http://127.0.0.1:{free_port()}",
        "another scheme": server.url.replace("http://", "https://"),
        "another allowed host name": server.url.replace("127.0.0.1", "localhost"),
    }[other]

    async def from_other_page():
        async with open_from(server, cookie, origin) as connection:
            return await ping(connection)

    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(from_other_page())
    assert refused.value.response.status_code == 403


def memory_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


async def send_until_closed(server, cookie: str, message) -> int:
    """Sends `message` (a string, or fragments of one); returns the close code the server sent (None: none)."""
    async with ChatSocket(server.url, cookie) as socket:
        try:
            await socket.connection.send(message)
            await asyncio.wait_for(socket.connection.recv(), 30)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
    return None


def test_a_huge_message_in_small_fragments_is_refused_before_it_is_buffered(app):
    server, cookie = app
    pid = server.process.pid
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak resident size starts again from now
    resident_before = memory_kib(pid, "VmRSS")
    fragment = "x" * (64 * 1024)

    code = asyncio.run(send_until_closed(server, cookie, (fragment for _ in range(60 * 16))))  # 60 MiB

    assert memory_kib(pid, "VmHWM") - resident_before < 30 * 1024
    assert code == 1009


def test_a_single_frame_over_a_mebibyte_gets_a_close_frame(app):
    server, cookie = app

    code = asyncio.run(send_until_closed(server, cookie, json.dumps({"type": "ping", "pad": "x" * 2 * 1024 * 1024})))

    assert code == 1009


def test_a_message_just_over_the_limit_is_refused_with_1009(app):
    server, cookie = app
    frame = json.dumps({"type": "ping", "pad": ""})

    code = asyncio.run(
        send_until_closed(server, cookie, frame.replace('""', '"' + "x" * (LIMIT - len(frame) + 1) + '"'))
    )

    assert code == 1009


def test_a_message_at_the_limit_is_answered(app):
    server, cookie = app
    frame = json.dumps({"type": "ping", "pad": ""})

    async def send_at_limit():
        async with ChatSocket(server.url, cookie) as socket:
            await socket.connection.send(frame.replace('""', '"' + "x" * (LIMIT - len(frame)) + '"'))
            return await socket.until("pong")

    assert asyncio.run(send_at_limit()) == [{"type": "pong"}]
