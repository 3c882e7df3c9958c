"""The OpenAI-compatible endpoint through the official `openai` client, against the app as `make run` serves it (a
real Daphne, a real model server speaking OpenAI's wire format): models, completions streamed and not, an agent
with a tool call, usage, an approval decided in another connection while the client waits, keys refused, a client
`tools` array refused."""

from __future__ import annotations

import json
import threading
import time
import uuid

import httpx
import openai
import pytest
from websockets.sync.client import connect

from tests.support.model_server import SSEResponse, openai_sse_body
from tests.support.processes import log_in, manage
from tests.support.served_api import Key, served_api

PASSWORD = "api-tests-password-1"
MAILER = """
from agents.models import Agent
Agent.objects.create(slug="mailer", name="Mailer", system_prompt="You send mail.")
"""


def answer(text: str = "", tool_calls=None, usage=None) -> SSEResponse:
    return SSEResponse(openai_sse_body(text=text, tool_calls=tool_calls, usage=usage))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with served_api(
        tmp_path_factory.mktemp("openai-api"),
        {"ada": PASSWORD, "bob": PASSWORD},
        keys={
            "ada": Key("ada", "laptop"),
            "expired": Key("ada", "old", "row.expires_at = timezone.now() - datetime.timedelta(days=1); row.save()"),
            "revoked": Key("ada", "gone", "row.revoke()"),
        },
        setup=MAILER,
        AGENTWEB_TOOL_MODULES="tests.support.approval_tools",
        AGENTWEB_SSE_KEEPALIVE="0.2",
        AGENTWEB_API_APPROVAL_TIMEOUT="120",
    ) as app:
        yield app


def client(app, key: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{app['base_url']}/v1", api_key=key or app["keys"]["ada"], max_retries=0)


def test_models_lists_the_persons_agents_and_model_configurations(app):
    ids = [model.id for model in client(app).models.list()]
    assert "mailer" in ids
    assert "model:default" in ids


def test_a_non_streamed_completion_returns_the_answer_and_its_usage(app):
    app["model"].enqueue(answer("Hello from the model.", usage={"prompt_tokens": 12, "completion_tokens": 5}))
    response = client(app).chat.completions.create(
        model="model:default", messages=[{"role": "user", "content": "Say hello"}]
    )
    assert response.choices[0].message.content == "Hello from the model."
    assert response.choices[0].finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (12, 5)


def test_the_history_goes_to_the_model_and_the_thread_is_in_the_persons_sidebar(app):
    app["model"].enqueue(answer("Blue."))
    raw = client(app).chat.completions.with_raw_response.create(
        model="mailer",
        messages=[
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": "Sky colour?"},
            {"role": "assistant", "content": "Which sky?"},
            {"role": "user", "content": "Earth's, by day."},
        ],
    )
    thread = raw.headers["X-Agentweb-Thread"]
    assert raw.parse().choices[0].message.content == "Blue."
    sent = app["model"].carried()
    assert sent["messages"][-3:] == [("user", "Sky colour?"), ("assistant", "Which sky?"), ("user", "Earth's, by day.")]
    assert "You send mail." in sent["system"] and "Answer in one word." in sent["system"]
    cookie = log_in(app["base_url"], "ada", PASSWORD)
    page = httpx.get(f"{app['base_url']}/t/{thread}/", headers={"Cookie": cookie})
    assert page.status_code == 200 and "Earth&#x27;s, by day." in page.text
    other = httpx.get(f"{app['base_url']}/t/{thread}/", headers={"Cookie": log_in(app["base_url"], "bob", PASSWORD)})
    assert other.status_code == 404


def test_a_streamed_completion_with_a_tool_call_streams_the_answer_and_the_usage_last(app):
    app["model"].enqueue(
        answer(tool_calls=[{"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}}]),
        answer("6 × 7 = 42.", usage={"prompt_tokens": 30, "completion_tokens": 7}),
    )
    chunks = list(
        client(app).chat.completions.create(
            model="model:default",
            messages=[{"role": "user", "content": "What is 6*7?"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "6 × 7 = 42."
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens >= 7
    tool_result = next(m for m in app["model"].requests[-1]["json"]["messages"] if m["role"] == "tool")
    assert tool_result["content"] == "42"


def decide_when_asked(app, thread_box: dict, decision: str) -> threading.Thread:
    """Another connection (the chat's websocket, as the person's tab): approves the call once it waits."""

    def decide():
        cookie = log_in(app["base_url"], "ada", PASSWORD)
        ws = app["base_url"].replace("http://", "ws://") + "/ws/chat/"
        deadline = time.monotonic() + 60
        while "thread" not in thread_box and time.monotonic() < deadline:
            time.sleep(0.05)
        with connect(ws, additional_headers={"Cookie": cookie}, origin=app["base_url"]) as socket:
            socket.send(json.dumps({"type": "thread.subscribe", "thread": thread_box["thread"], "after_seq": None}))
            while True:
                event = json.loads(socket.recv(timeout=60))
                calls = []
                if event["type"] == "thread.snapshot":
                    calls = [
                        c["id"]
                        for m in event["messages"]
                        for c in m.get("tool_calls") or []
                        if c["status"] == "awaiting_approval"
                    ]
                elif event["type"] == "tool_call.awaiting_approval":
                    calls = [event["tool_call"]]
                if calls:
                    socket.send(json.dumps({"type": "tool_call.decide", "tool_call": calls[0], "decision": decision}))
                    return

    worker = threading.Thread(target=decide, daemon=True)
    worker.start()
    return worker


def newest_thread(app) -> str:
    code = "from chat.models import Thread; print(Thread.objects.filter(source='api').latest('created_at').pk)"
    return manage(app["env"], "shell", "-c", code).strip().splitlines()[-1]


def test_a_call_needing_approval_holds_the_stream_until_it_is_approved_in_the_chat(app):
    app["model"].enqueue(
        answer(tool_calls=[{"id": "m1", "name": "send_email", "arguments": {"to": "a@example.com", "subject": "Hi"}}]),
        answer("Sent."),
    )
    box: dict = {}
    stream = client(app).chat.completions.create(
        model="model:default", messages=[{"role": "user", "content": "Mail a@example.com"}], stream=True
    )
    box["thread"] = newest_thread(app)
    decider = decide_when_asked(app, box, "approve")
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    decider.join(5)
    assert text == "Sent."
    tool_result = next(m for m in app["model"].requests[-1]["json"]["messages"] if m["role"] == "tool")
    assert tool_result["content"] == "sent to a@example.com: Hi"


@pytest.mark.parametrize("which", ["expired", "revoked", "made-up"])
def test_an_unusable_key_gets_401_with_a_json_error(app, which):
    key = app["keys"].get(which, "aw-" + uuid.uuid4().hex)
    with pytest.raises(openai.AuthenticationError) as refused:
        client(app, key).models.list()
    assert refused.value.status_code == 401
    assert refused.value.body["code"] == "invalid_api_key"


def test_a_signed_in_browser_session_is_not_a_key(app):
    cookie = log_in(app["base_url"], "ada", PASSWORD)
    response = httpx.get(f"{app['base_url']}/v1/models", headers={"Cookie": cookie})
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"


def test_a_client_tools_array_is_refused_and_nothing_is_written(app):
    before = newest_thread(app)
    with pytest.raises(openai.BadRequestError) as refused:
        client(app).chat.completions.create(
            model="model:default",
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        )
    assert refused.value.body["code"] == "client_tools_not_supported"
    assert newest_thread(app) == before


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        (b"{not json", {"Content-Type": "application/json"}, 400, "invalid_json"),
        (json.dumps({"model": "nope", "messages": [{"role": "user", "content": "x"}]}), {}, 404, "model_not_found"),
        (
            json.dumps({"model": "model:default", "messages": [{"role": "user", "content": "x"}] * 501}),
            {},
            400,
            "context_length_exceeded",
        ),
        (
            json.dumps({"model": "model:default", "messages": []}),
            {"Content-Type": "text/plain"},
            415,
            "unsupported_media_type",
        ),
    ],
)
def test_bad_requests_get_a_clear_error_and_write_nothing(app, body, headers, status, code):
    before = newest_thread(app)
    response = httpx.post(
        f"{app['base_url']}/v1/chat/completions",
        content=body,
        headers={"Authorization": f"Bearer {app['keys']['ada']}", "Content-Type": "application/json", **headers},
    )
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert newest_thread(app) == before


def test_a_20_mb_body_is_refused_before_it_is_read_in_openais_shape(app):
    with pytest.raises(openai.APIStatusError) as refused:
        client(app).chat.completions.create(
            model="model:default", messages=[{"role": "user", "content": "x" * (20 * 1024 * 1024)}]
        )
    assert refused.value.status_code == 413 and refused.value.code == "payload_too_large"
    assert refused.value.type == "invalid_request_error" and "at most 1.0 MB" in refused.value.message

    response = httpx.post(
        f"{app['base_url']}/v1/chat/completions",
        content=b"x" * (20 * 1024 * 1024),
        headers={"Authorization": f"Bearer {app['keys']['ada']}", "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json() == {
        "error": {
            "message": "The request is too big: at most 1.0 MB may be sent here.",
            "type": "invalid_request_error",
            "param": None,
            "code": "payload_too_large",
        }
    }
