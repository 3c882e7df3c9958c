"""A run a program started with an API key (/v1, docs/api.md) that waits for approval is in its owner's inbox, marked
as the API's, and in nobody else's (a real server, a scripted model)."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.support.model_server import ScriptedModelServer, SSEResponse, openai_sse_body
from tests.support.processes import manage, served_app

ASK = {"id": "m1", "name": "send_email", "arguments": {"to": "a@example.com", "subject": "Hi"}}
ISSUE = (
    "from api.models import ApiKey; from django.contrib.auth.models import User;"
    " print(ApiKey.issue(User.objects.get(username='ada'), 'k')[1])"
)
USERS = {"ada": "api-tests-password-1", "bob": "api-tests-password-2"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with (
        ScriptedModelServer() as model,
        served_app(
            tmp_path_factory.mktemp("inbox-api"),
            USERS,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=model.base_url,
            AGENTWEB_LLM_MODEL="scripted",
            AGENTWEB_TOOL_MODULES="tests.support.approval_tools",
            AGENTWEB_SSE_KEEPALIVE="0.2",
            AGENTWEB_API_APPROVAL_TIMEOUT="1",
        ) as (base_url, env),
    ):
        key = manage(env, "shell", "-c", ISSUE).strip().splitlines()[-1]
        yield {"base_url": base_url, "model": model, "key": key}


def signed_in(base_url: str, username: str) -> httpx.Client:
    http = httpx.Client(base_url=base_url, timeout=30)
    form = http.get("/accounts/login/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    answer = http.post(
        "/accounts/login/",
        data={"username": username, "password": USERS[username], "csrfmiddlewaretoken": token},
    )
    assert answer.status_code == 302, answer.text[:300]
    return http


def test_a_call_an_api_run_waits_on_is_in_the_owners_inbox_only(app):
    app["model"].enqueue(SSEResponse(openai_sse_body(tool_calls=[ASK])))
    body = {"model": "model:default", "messages": [{"role": "user", "content": "mail"}], "stream": True}
    headers = {"Authorization": f"Bearer {app['key']}"}
    url = f"{app['base_url']}/v1/chat/completions"
    with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as response:
        thread = response.headers["X-Agentweb-Thread"]
        lines = [line for line in response.iter_lines() if line]
    assert ": waiting for approval: send_email" in lines

    ada, bob = signed_in(app["base_url"], "ada"), signed_in(app["base_url"], "bob")
    try:
        data = ada.get("/inbox/items").json()
        [item] = data["items"]
        assert (item["kind"], item["tool"], item["args"]) == ("approval", "send_email", ASK["arguments"])
        assert (item["thread"]["id"], item["thread"]["source"]) == (thread, "api")
        assert data["count"] == 1
        page = ada.get("/inbox").text
        assert '<span class="inbox-count-number">1</span>' in page
        assert bob.get("/inbox/items").json() == {"items": [], "count": 0}
        assert thread not in bob.get("/inbox").text
    finally:
        ada.close()
        bob.close()
