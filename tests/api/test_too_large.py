"""A body over its route's limit under an ASGI server that is not agentweb.serve (`manage.py runserver`, which hands
the app whatever it was sent): agentweb/http_handler.py refuses it as agentweb.serve does, each API in its own error
shape (api/errors.py), the rest of the app with `{"error": text}` (tests/api/test_openai_client.py and
test_run_api.py check the same through the real server)."""

from __future__ import annotations

import json

import pytest
from asgiref.testing import ApplicationCommunicator

from agentweb.http_handler import PooledThreadASGIHandler

TOLD = "The request is too big: at most 1.0 MB may be sent here."


def post(path: str, *headers: tuple[bytes, bytes]) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def refused(path: str, *, announced: bool) -> tuple[int, dict]:
    headers = [(b"content-length", b"20000000")] if announced else []
    communicator = ApplicationCommunicator(PooledThreadASGIHandler(threads=1), post(path, *headers))
    for _ in range(1 if announced else 17):  # 17 pieces of 64 KiB: past 1 MiB with the last
        await communicator.send_input({"type": "http.request", "body": b"x" * 65536, "more_body": True})
    start = await communicator.receive_output(10)
    body = await communicator.receive_output(10)
    return start["status"], json.loads(body["body"])


@pytest.mark.parametrize("announced", [True, False], ids=["announced", "read"])
async def test_v1_answers_413_in_openais_shape(announced):
    assert await refused("/v1/chat/completions", announced=announced) == (
        413,
        {"error": {"message": TOLD, "type": "invalid_request_error", "param": None, "code": "payload_too_large"}},
    )


@pytest.mark.parametrize("announced", [True, False], ids=["announced", "read"])
async def test_the_run_api_answers_413_in_its_shape(announced):
    assert await refused("/api/v1/threads", announced=announced) == (
        413,
        {"error": {"code": "payload_too_large", "message": TOLD}},
    )


async def test_the_rest_of_the_app_keeps_its_shape():
    assert await refused("/accounts/login/", announced=True) == (413, {"error": TOLD})
