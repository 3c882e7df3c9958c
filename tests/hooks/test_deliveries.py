"""`POST /hooks/<id>` against the app as `make run` serves it (a real Daphne, a real model server): a delivery signed
with Python's own hmac starts a run marked as the trigger's, and every refusal (signature missing, wrong, stale; an
unknown id; a 5 MB body; a field the template needs missing; the rate limit) writes nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import sqlite3
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.model_server import ScriptedModelServer, SSEResponse, openai_sse_body
from tests.support.processes import manage, served_app

PASSWORD = "hooks-tests-password-1"
RATE = 3


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hooks")
    with (
        ScriptedModelServer() as model,
        served_app(
            folder,
            {"ada": PASSWORD},
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=model.base_url,
            AGENTWEB_LLM_MODEL="scripted",
            AGENTWEB_HOOK_RATE_PER_MINUTE=str(RATE),
        ) as (base_url, env),
    ):
        manage(
            env,
            "shell",
            "-c",
            "from agents.models import Agent; Agent.objects.create(slug='triage', name='Triage',"
            " system_prompt='You triage issues.')",
        )
        yield {"base_url": base_url, "env": env, "model": model, "db": folder / "e2e.sqlite3"}


def add_trigger(app, prompt: str = "New issue: {issue.title} ({issue.labels.0})", agent: str = "triage"):
    printed = manage(app["env"], "triggers", "add", "ada", "--agent", agent, "--prompt", prompt).strip()
    trigger_id, secret = printed.split(" ")
    return trigger_id, secret


def sign(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """What a sender does, with nothing of the app's: the HMAC-SHA256 of `<timestamp>.<body>`."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    return {"X-Agentweb-Timestamp": ts, "X-Agentweb-Signature": f"sha256={digest}", "Content-Type": "application/json"}


def post(app, trigger_id: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{app['base_url']}/hooks/{trigger_id}", content=body, headers=headers, timeout=30)


def rows(app, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(Path(app["db"])) as db:
        return db.execute(sql, args).fetchall()


def written(app) -> tuple[int, int, int]:
    """Threads, messages and deliveries in the app's database."""
    return tuple(
        rows(app, f"SELECT count(*) FROM {table}")[0][0] for table in ("chat_thread", "chat_message", "hooks_delivery")
    )


def run_status(app, thread: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        found = rows(app, "SELECT status FROM chat_run WHERE thread_id = ?", uuid.UUID(thread).hex)
        if found and found[0][0] not in ("running", "waiting", "queued"):
            return found[0][0]
        if time.monotonic() > deadline:
            return found[0][0] if found else "none"
        time.sleep(0.1)


ISSUE = {"issue": {"title": "Login fails", "labels": ["bug"], "body": "It fails."}}


def test_a_signed_delivery_starts_a_run_marked_as_the_triggers_that_completes(app):
    trigger_id, secret = add_trigger(app)
    app["model"].enqueue(SSEResponse(openai_sse_body(text="Labelled as a bug.")))
    body = json.dumps(ISSUE).encode()
    answer = post(app, trigger_id, body, {**sign(secret, body), "X-Agentweb-Delivery": "d-1"})
    assert answer.status_code == 202, answer.text
    thread = answer.json()["thread"]
    assert run_status(app, thread) == "completed"
    assert rows(app, "SELECT source FROM chat_thread WHERE id = ?", uuid.UUID(thread).hex) == [("trigger",)]
    assert rows(app, "SELECT source FROM chat_run WHERE thread_id = ?", uuid.UUID(thread).hex) == [("trigger",)]
    sent = app["model"].carried()
    assert sent["messages"][-1] == ("user", "New issue: Login fails (bug)")
    assert "You triage issues." in sent["system"]
    answered = rows(
        app, "SELECT content FROM chat_message WHERE thread_id = ? AND role = 'assistant'", uuid.UUID(thread).hex
    )
    assert answered == [("Labelled as a bug.",)]


def test_the_same_delivery_id_twice_runs_once_and_the_second_answer_names_the_first_thread(app):
    trigger_id, secret = add_trigger(app)
    app["model"].enqueue(SSEResponse(openai_sse_body(text="Once.")))
    body = json.dumps(ISSUE).encode()
    first = post(app, trigger_id, body, {**sign(secret, body), "X-Agentweb-Delivery": "same"})
    assert first.status_code == 202
    assert run_status(app, first.json()["thread"]) == "completed"
    before = written(app)
    again = post(app, trigger_id, body, {**sign(secret, body), "X-Agentweb-Delivery": "same"})
    assert again.status_code == 202
    assert again.json()["thread"] == first.json()["thread"]
    assert written(app) == before


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param(lambda secret, body: {"Content-Type": "application/json"}, id="missing"),
        pytest.param(lambda secret, body: sign("not-the-secret", body), id="wrong"),
        pytest.param(lambda secret, body: sign(secret, body + b" "), id="another-body"),
        pytest.param(lambda secret, body: sign(secret, body, timestamp=int(time.time()) - 3600), id="stale"),
        pytest.param(lambda secret, body: sign(secret, body, timestamp=int(time.time()) + 3600), id="future"),
    ],
)
def test_a_bad_signature_gets_401_and_nothing_is_written(app, headers):
    trigger_id, secret = add_trigger(app)
    body = json.dumps(ISSUE).encode()
    before = written(app)
    answer = post(app, trigger_id, body, headers(secret, body))
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "bad_signature"
    assert written(app) == before


def test_an_unknown_trigger_id_is_answered_as_a_wrong_signature_is(app):
    trigger_id, secret = add_trigger(app)
    body = json.dumps(ISSUE).encode()
    wrong = post(app, trigger_id, body, sign("not-the-secret", body))
    unknown = post(app, "no-such-trigger-id", body, sign(secret, body))
    assert (unknown.status_code, unknown.json()) == (wrong.status_code, wrong.json())
    stale = sign(secret, body, timestamp=1)
    assert post(app, "no-such-trigger-id", body, stale).json() == post(app, trigger_id, body, stale).json()


def test_a_removed_trigger_takes_no_more_deliveries(app):
    trigger_id, secret = add_trigger(app)
    manage(app["env"], "triggers", "remove", trigger_id)
    body = json.dumps(ISSUE).encode()
    assert post(app, trigger_id, body, sign(secret, body)).status_code == 401


def test_a_field_the_template_needs_missing_gets_400_naming_it_and_nothing_is_written(app):
    trigger_id, secret = add_trigger(app)
    body = json.dumps({"issue": {"title": "No labels"}}).encode()
    before = written(app)
    answer = post(app, trigger_id, body, sign(secret, body))
    assert answer.status_code == 400
    assert answer.json()["error"]["field"] == "issue.labels.0"
    assert "issue.labels.0" in answer.json()["error"]["message"]
    assert written(app) == before


@pytest.mark.parametrize("body", [b"[1, 2]", b"not json", b'"text"'])
def test_a_body_that_is_not_a_json_object_gets_400(app, body):
    trigger_id, secret = add_trigger(app)
    before = written(app)
    answer = post(app, trigger_id, body, sign(secret, body))
    assert answer.status_code == 400
    assert written(app) == before


def test_a_5_mb_body_gets_413_before_it_is_sent(app):
    """Only the head goes out: the answer comes while the body's 5 MB are still unsent."""
    trigger_id, _ = add_trigger(app)
    url = urlsplit(app["base_url"])
    head = (
        f"POST /hooks/{trigger_id} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {5 * 1024 * 1024}\r\nX-Agentweb-Timestamp: {int(time.time())}\r\n"
        "X-Agentweb-Signature: sha256=00\r\n\r\n"
    )
    before = written(app)
    with socket.create_connection((url.hostname, url.port), timeout=10) as conn:
        conn.sendall(head.encode() + b'{"issue": ')
        answer = conn.recv(65536).decode(errors="replace")
    assert answer.startswith("HTTP/1.1 413"), answer[:200]
    assert written(app) == before


def test_a_trigger_takes_its_rate_and_no_more_and_the_one_over_writes_nothing(app):
    trigger_id, secret = add_trigger(app, prompt="Ping {n}")
    app["model"].enqueue(*(SSEResponse(openai_sse_body(text="Pong.")) for _ in range(RATE)))
    threads = []
    for n in range(RATE):
        body = json.dumps({"n": n}).encode()
        answer = post(app, trigger_id, body, sign(secret, body))
        assert answer.status_code == 202, answer.text
        threads.append(answer.json()["thread"])
    for thread in threads:
        run_status(app, thread)
    before = written(app)
    body = json.dumps({"n": RATE}).encode()
    over = post(app, trigger_id, body, sign(secret, body))
    assert over.status_code == 429
    assert over.json()["error"]["code"] == "rate_limited"
    assert written(app) == before
    other_id, other_secret = add_trigger(app, prompt="Ping {n}")  # its own bucket
    app["model"].enqueue(SSEResponse(openai_sse_body(text="Pong.")))
    assert post(app, other_id, body, sign(other_secret, body)).status_code == 202


def test_triggers_list_names_each_trigger_and_its_owner(app):
    trigger_id, _ = add_trigger(app)
    listed = manage(app["env"], "triggers", "list")
    line = next(line for line in listed.splitlines() if line.startswith(trigger_id))
    assert line.split("\t")[1:3] == ["ada", "triage"]
