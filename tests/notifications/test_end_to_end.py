"""A real run tells its person: the app served as `make run` serves it (Daphne, its own database), a scripted model
asking for send_email, a call that needs approval (tests/support/approval_tools.py). Its owner chose email and a
webhook: the email arrives at the test's SMTP server, the webhook at the test's receiver, which checks its signature;
neither carries the call's arguments. A run that fails is told too."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from hooks.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from tests.notifications.receivers import PostReceiver, SMTPServer
from tests.support.model_server import ErrorResponse, SSEResponse, openai_sse_body
from tests.support.served_api import Key, served_api

TO, SUBJECT = "ceo@merger-target.example", "Confidential: the offer is 41 per share"
ASK = {"id": "m1", "name": "send_email", "arguments": {"to": TO, "subject": SUBJECT}}
SECRET = "the-e2e-webhook-secret-0123"
PUBLIC_URL = "https://chat.example.org"


def setup_code(webhook_url: str) -> str:
    return f"""
from notifications.models import Preference
ada = User.objects.get(username="ada")
ada.email = "ada@example.com"
ada.save()
Preference.objects.create(user=ada, email=True, webhook=True, webhook_url={webhook_url!r}, webhook_secret={SECRET!r})
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with (
        SMTPServer() as smtp,
        PostReceiver(status=200) as webhook,
        served_api(
            tmp_path_factory.mktemp("notify-e2e"),
            {"ada": "notify-tests-password-1"},
            keys={"ada": Key("ada", "k")},
            setup=setup_code(webhook.url("/hook")),
            AGENTWEB_TOOL_MODULES="tests.support.approval_tools",
            AGENTWEB_SSE_KEEPALIVE="0.2",
            AGENTWEB_API_APPROVAL_TIMEOUT="1",
            AGENTWEB_NOTIFY_WINDOW="0.5",
            AGENTWEB_NOTIFY_ALLOWED_HOSTS="127.0.0.1",
            AGENTWEB_PUBLIC_URL=PUBLIC_URL,
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=str(smtp.port),
        ) as served,
    ):
        yield {**served, "key": served["keys"]["ada"], "mailbox": smtp.mailbox, "webhook": webhook}


def ask(app, content: str) -> str:
    """Start a run through the API; its thread's id (the response ends while the run waits on or after it failed)."""
    body = {"model": "model:default", "messages": [{"role": "user", "content": content}], "stream": True}
    headers = {"Authorization": f"Bearer {app['key']}"}
    url = f"{app['base_url']}/v1/chat/completions"
    with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as response:
        for _ in response.iter_lines():
            pass
        return response.headers["X-Agentweb-Thread"]


def wait_for(found, what: str, seconds: float = 20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = found()
        if result:
            return result
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {seconds} s")


def test_a_call_waiting_for_approval_is_emailed_and_posted_without_its_arguments(app):
    app["model"].enqueue(SSEResponse(openai_sse_body(tool_calls=[ASK])))
    thread = ask(app, "mail the offer")

    [message] = wait_for(lambda: list(app["mailbox"].messages), "email")
    assert message["Subject"] == "[agentweb] send_email waits for your approval"
    body = message.get_content()
    assert "send_email waits for approval in “" in body and f"{PUBLIC_URL}/inbox" in body
    assert TO not in body and SUBJECT not in body and "41 per share" not in body

    [delivery] = wait_for(lambda: list(app["webhook"].received), "webhook delivery")
    verify(SECRET, delivery.headers[TIMESTAMP_HEADER], delivery.headers[SIGNATURE_HEADER], delivery.body)
    payload = json.loads(delivery.body)
    assert payload["events"][0]["tool"] == "send_email" and payload["events"][0]["thread"]["id"] == thread
    text = delivery.body.decode()
    assert TO not in text and "41 per share" not in text and SECRET not in text and app["key"] not in text


def test_a_run_that_fails_is_told_once(app):
    before_mail, before_hook = len(app["mailbox"].messages), len(app["webhook"].received)
    app["model"].enqueue(ErrorResponse(400, {"error": {"message": "the model refused: bad request"}}))
    thread = ask(app, "this one fails")

    message = wait_for(lambda: app["mailbox"].messages[before_mail:], "email")[0]
    assert message["Subject"] == "[agentweb] A run failed"
    assert f"{PUBLIC_URL}/t/{thread}/" in message.get_content()
    assert "bad request" not in message.get_content()  # the error's text is the thread's to show, not the mail's
    wait_for(lambda: app["webhook"].received[before_hook:], "webhook delivery")
    time.sleep(1.0)  # a second window: nothing more comes of the same failure
    assert len(app["mailbox"].messages) == before_mail + 1 and len(app["webhook"].received) == before_hook + 1
