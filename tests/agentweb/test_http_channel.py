"""What the real server (agentweb/serve.py, agentweb/http_channel.py) does with a request body over its route's limit
and with a request that arrives too slowly, seen from a raw socket as an attacker's client would send it."""

from __future__ import annotations

import json
import select
import socket
import time
from pathlib import Path

import pytest

from tests.support.processes import Daphne, app_environment

BODY_LIMIT = 1024 * 1024  # AGENTWEB_MAX_REQUEST_BODY_BYTES's default
FILE_LIMIT = 10 * 1024 * 1024  # AGENTWEB_ATTACHMENT_MAX_BYTES's default
TIMEOUT_S = 1  # AGENTWEB_REQUEST_TIMEOUT, short for these tests
PATIENCE_S = 30  # how long a client here waits for an answer before it gives up


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    env = app_environment(tmp_path_factory.mktemp("http-channel"), AGENTWEB_REQUEST_TIMEOUT=str(TIMEOUT_S))
    server = Daphne(env).start()
    try:
        yield server
    finally:
        server.stop()


def connect(server: Daphne) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", server.port))
    client.settimeout(PATIENCE_S)
    return client


def head(method: str, path: str, *headers: str) -> bytes:
    return "\r\n".join([f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *headers, "", ""]).encode()


def answered(client: socket.socket) -> bool:
    return bool(select.select([client], [], [], 0)[0])


def read_to_close(client: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket timeout if it never does)."""
    received = b""
    while chunk := client.recv(65536):
        received += chunk
    return received


def status_and_error(answer: bytes) -> tuple[int, str]:
    head_part, _, body = answer.partition(b"\r\n\r\n")
    return int(head_part.split()[1]), json.loads(body)["error"]


def send_until_answered(client: socket.socket, pieces, stop_at: int) -> int:
    """Sends `pieces` until the server answers (or closes), or `stop_at` bytes went; returns how many went."""
    sent = 0
    for piece in pieces:
        if sent >= stop_at or answered(client):
            break
        try:
            client.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(piece)
    return sent


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


# --- bodies over their route's limit ------------------------------------------------------------------------------


def test_a_sign_in_post_announcing_a_huge_body_is_refused_before_the_body_is_read(server):
    with connect(server) as client:
        client.sendall(head("POST", "/accounts/login/", "Content-Length: 1000000000"))
        client.sendall(b"username=a&password=" + b"x" * 65536)  # and nothing more of the gigabyte announced

        status, error = status_and_error(read_to_close(client))

    assert status == 413
    assert error == "The request is too big: at most 1.0 MB may be sent here."


def test_a_client_still_sending_a_refused_body_can_read_the_answer_once_it_stops(server):
    """As a browser does: it sends the file whatever the answer, then reads it."""
    with connect(server) as client:
        client.sendall(head("POST", "/accounts/login/", f"Content-Length: {64 * 65536}"))
        for _ in range(16):  # four seconds of sending, after the answer came: none of it refused by a reset
            client.sendall(b"x" * 65536)
            time.sleep(0.25)

        status, _ = status_and_error(read_to_close(client))

    assert status == 413


def test_an_upload_announcing_more_than_the_file_limit_is_refused_before_sign_in(server):
    with connect(server) as client:
        client.sendall(
            head("POST", "/attachments/", f"Content-Length: {FILE_LIMIT + 1024 * 1024}", "Content-Type: text/plain")
        )

        status, error = status_and_error(read_to_close(client))

    assert status == 413
    assert error == "The file is too big: a file may be at most 10.0 MB."


def test_the_upload_route_takes_a_body_the_other_routes_refuse(server):
    body = b"x" * (2 * BODY_LIMIT)
    answers = {}
    for path in ("/attachments/", "/accounts/login/"):
        with connect(server) as client:
            client.sendall(head("POST", path, f"Content-Length: {len(body)}", "Connection: close"))
            send_until_answered(client, (body[i : i + 65536] for i in range(0, len(body), 65536)), len(body))
            answers[path] = read_to_close(client)

    assert answers["/attachments/"].startswith(b"HTTP/1.1 403 ")  # Django's CSRF check: the app read it
    assert answers["/accounts/login/"].startswith(b"HTTP/1.1 413 ")


def test_a_chunked_body_growing_past_the_limit_is_refused_and_the_server_does_not_keep_it(server):
    sent_at_most = 64 * 1024 * 1024
    chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    rss_before = rss_bytes(server.process.pid)
    with connect(server) as client:
        client.sendall(head("POST", "/accounts/login/", "Transfer-Encoding: chunked"))
        sent = send_until_answered(client, iter(lambda: chunk, None), sent_at_most)
        if not answered(client):  # the whole body went: its end too (the server before this fix then read it all)
            client.sendall(b"0\r\n\r\n")

        answer = read_to_close(client)

    assert answer.startswith(b"HTTP/1.1 413 "), (sent, answer[:200])
    assert rss_bytes(server.process.pid) - rss_before < sent_at_most // 4


def test_a_body_within_the_limit_still_reaches_the_app(server):
    body = b"username=a&password=" + b"x" * (BODY_LIMIT // 2)
    with connect(server) as client:
        client.sendall(head("POST", "/accounts/login/", f"Content-Length: {len(body)}", "Connection: close") + body)

        answer = read_to_close(client)

    assert answer.startswith(b"HTTP/1.1 403 ")  # Django's CSRF check: the app saw it


# --- requests too slow to arrive ----------------------------------------------------------------------------------


def test_a_connection_that_sends_nothing_is_closed(server):
    with connect(server) as client:
        assert read_to_close(client) == b""


def test_a_request_whose_headers_trickle_in_is_answered_408_and_closed(server):
    with connect(server) as client:
        client.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        for _ in range(int(PATIENCE_S / 0.25)):  # a byte every quarter second: Twisted's idle timeout never fired
            if answered(client):
                break
            client.sendall(b"a")
            time.sleep(0.25)

        status, error = status_and_error(read_to_close(client))

    assert status == 408
    assert error == "The request took too long to arrive."


def test_a_body_that_trickles_is_answered_408_and_closed(server):
    with connect(server) as client:
        client.sendall(head("POST", "/accounts/login/", "Content-Length: 1000"))
        for _ in range(int(PATIENCE_S / 0.25)):  # 4 bytes a second, well below the least rate a body must keep up
            if answered(client):
                break
            client.sendall(b"x")
            time.sleep(0.25)

        status, _ = status_and_error(read_to_close(client))

    assert status == 408


def test_a_request_that_arrives_in_time_is_answered_and_its_connection_kept_until_idle(server):
    with connect(server) as client:
        client.sendall(head("GET", "/accounts/login/"))
        first = client.recv(65536)
        client.sendall(head("GET", "/accounts/login/"))  # the same connection, kept alive

        rest = read_to_close(client)  # then closed, idle

    assert first.startswith(b"HTTP/1.1 200 ")
    assert rest.count(b"HTTP/1.1 200 ") == 1
    assert b"HTTP/1.1 408 " not in rest
