"""The audit log of the app as `make run` serves it (Daphne, a database of its own, a scripted model): a sign-in
over real HTTP, and a decision through the run API with an API key, recorded as the API's."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from tests.support.model_server import ScriptedModelServer, SSEResponse, openai_sse_body
from tests.support.processes import manage, served_app

ASK = {"id": "m1", "name": "send_email", "arguments": {"to": "secret-address@example.com", "subject": "Hi"}}
ISSUE = (
    "from api.models import ApiKey; from django.contrib.auth.models import User;"
    " print(ApiKey.issue(User.objects.get(username='ada'), 'k')[1])"
)
EVENTS = (
    "import json; from audit.models import Event; print(json.dumps(list(Event.objects.order_by('id').values()),"
    " default=str))"
)
USERS = {"ada": "audit-tests-password-1"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with (
        ScriptedModelServer() as model,
        served_app(
            tmp_path_factory.mktemp("audit-served"),
            USERS,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=model.base_url,
            AGENTWEB_LLM_MODEL="scripted",
            AGENTWEB_TOOL_MODULES="tests.support.approval_tools",
            AGENTWEB_API_APPROVAL_TIMEOUT="1",
        ) as (base_url, env),
    ):
        key = manage(env, "shell", "-c", ISSUE).strip().splitlines()[-1]
        yield {"base_url": base_url, "model": model, "key": key, "env": env}


def recorded(app) -> list[dict]:
    return json.loads(manage(app["env"], "shell", "-c", EVENTS).strip().splitlines()[-1])


def test_a_sign_in_and_an_api_decision_are_recorded(app):
    http = httpx.Client(base_url=app["base_url"], timeout=30)
    form = http.get("/accounts/login/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    data = {"username": "ada", "password": USERS["ada"], "csrfmiddlewaretoken": token}
    assert http.post("/accounts/login/", data=data).status_code == 302

    app["model"].enqueue(SSEResponse(openai_sse_body(tool_calls=[ASK])))
    body = {"model": "model:default", "messages": [{"role": "user", "content": "mail"}], "stream": True}
    headers = {"Authorization": f"Bearer {app['key']}"}
    with httpx.stream("POST", f"{app['base_url']}/v1/chat/completions", json=body, headers=headers, timeout=60) as r:
        thread = r.headers["X-Agentweb-Thread"]
        [line for line in r.iter_lines() if line]  # to its end: the run waits
    [item] = http.get("/inbox/items").json()["items"]
    app["model"].enqueue(SSEResponse(openai_sse_body(text="Sent.")))
    decided = httpx.post(
        f"{app['base_url']}/api/v1/tool-calls/{item['tool_call']}/decide",
        json={"decision": "approve"},
        headers=headers,
        timeout=30,
    )
    assert decided.status_code == 200, decided.text
    http.close()

    events = recorded(app)
    signin = next(e for e in events if e["action"] == "signin")
    assert (signin["actor_name"], signin["ip"]) == ("ada", "127.0.0.1")
    [approved] = [e for e in events if e["action"] == "approval.approve"]
    assert (approved["actor_name"], approved["target_label"], approved["ip"]) == ("ada", "send_email", "127.0.0.1")
    assert (approved["detail"]["via"], approved["detail"]["thread"]) == ("api", thread)
    assert "secret-address" not in json.dumps(events)
