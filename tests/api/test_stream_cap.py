"""A person's open streams count against AGENTWEB_MAX_SOCKETS_PER_USER the same way on both APIs (api/stream_cap.py):
at the cap, a streamed /v1 completion is refused as a run API event stream is (429 `too_many_streams`, the same
message, each in its API's shape) and nothing is written; a /v1 stream held open counts as a run API stream does.
Against the real server, with the official `openai` client and raw httpx."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest

from tests.support.model_server import response_from_script
from tests.support.served_api import Key, served_api

SLOW_ANSWER = {"text": " ".join(f"word{i}" for i in range(30)), "delay_ms": 100}
ASK = {"model": "model:default", "messages": [{"role": "user", "content": "hello"}]}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with served_api(
        tmp_path_factory.mktemp("stream-cap"),
        {"ada": "api-tests-password-1"},
        keys={"ada": Key("ada")},
        AGENTWEB_MAX_SOCKETS_PER_USER="1",
        AGENTWEB_SSE_KEEPALIVE="0.2",
    ) as app:
        yield app


def api(app) -> httpx.Client:
    return httpx.Client(
        base_url=f"{app['base_url']}/api/v1", headers={"Authorization": f"Bearer {app['keys']['ada']}"}, timeout=30
    )


def threads(app) -> int:
    with api(app) as run_api:
        return len(run_api.get("/threads", params={"limit": 100}).json()["threads"])


def until_accepted(attempt, seconds: float = 10.0):
    """`attempt()` until it is not refused for the cap (a closed stream is counted out once the server notices)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return attempt()
        except openai.RateLimitError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_at_the_cap_a_v1_stream_is_refused_as_a_run_api_stream_is(app):
    app["model"].enqueue(response_from_script({"text": "Hi."}))
    with api(app) as run_api:
        thread = run_api.post("/threads", json={"content": "hi"}).json()["thread"]
        with run_api.stream("GET", f"/threads/{thread}/events") as held:  # the person's one socket
            assert held.status_code == 200
            written = threads(app)

            refused_here = run_api.get(f"/threads/{thread}/events")
            client = openai.OpenAI(base_url=f"{app['base_url']}/v1", api_key=app["keys"]["ada"], max_retries=0)
            with pytest.raises(openai.RateLimitError) as refused_on_v1:
                client.chat.completions.create(**ASK, stream=True)
            with httpx.stream(
                "POST",
                f"{app['base_url']}/v1/chat/completions",
                json={**ASK, "stream": True},
                headers={"Authorization": f"Bearer {app['keys']['ada']}"},
            ) as raw:
                v1_body = raw.read() if raw.status_code == 429 else b"{}"  # a stream accepted is not read

    assert refused_here.status_code == 429
    run_api_error = refused_here.json()["error"]
    assert run_api_error["code"] == "too_many_streams"
    assert refused_on_v1.value.status_code == 429 and raw.status_code == 429
    v1_error = json.loads(v1_body)["error"]
    assert v1_error["code"] == refused_on_v1.value.code == "too_many_streams"
    assert v1_error["message"] == run_api_error["message"] and v1_error["type"] == "invalid_request_error"
    assert threads(app) == written  # nothing was written for the refused completions


def test_a_v1_stream_held_open_counts_as_a_run_api_stream_does(app):
    app["model"].enqueue(response_from_script(SLOW_ANSWER))
    client = openai.OpenAI(base_url=f"{app['base_url']}/v1", api_key=app["keys"]["ada"], max_retries=0)
    streaming = until_accepted(lambda: client.chat.completions.create(**ASK, stream=True))
    started = False
    with api(app) as run_api:
        for chunk in streaming:
            if chunk.choices and chunk.choices[0].delta.content:
                started = True
                break
        thread = run_api.get("/threads", params={"limit": 1}).json()["threads"][0]["id"]
        with run_api.stream("GET", f"/threads/{thread}/events") as while_streaming:
            status = while_streaming.status_code
            error = json.loads(while_streaming.read())["error"] if status == 429 else None  # accepted: not read
        rest = "".join(chunk.choices[0].delta.content or "" for chunk in streaming if chunk.choices)
    assert started and rest
    assert status == 429 and error["code"] == "too_many_streams"
