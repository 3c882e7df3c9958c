"""The run API against the app as `make run` serves it (Daphne, its own SQLite database) and the scripted model
server in its own process: a program's real HTTP requests with a real key, nothing patched."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support.processes import app_environment, daphne, log_in, manage, model_server

SEND_BURST = 40
MODEL_KEY = "sk-run-api-secret-never-shown"
PEOPLE = {"ada": "lovelace-1815", "stranger": "stranger-password-1", "hasty": "hasty-password-1"}
SETUP = """
import json
from django.contrib.auth.models import User
from tools.models import ToolSetting
from tools.services import sync_tool_settings
from api.models import ApiKey
people = {people!r}
keys = {{}}
for name, password in people.items():
    user = User.objects.create_user(name, password=password)
    keys[name] = ApiKey.issue(user, "tests")[1]
revoked, key = ApiKey.issue(User.objects.get(username="ada"), "revoked")
revoked.revoke()
keys["revoked"] = key
sync_tool_settings()
ToolSetting.objects.filter(name="current_time").update(requires_approval=True)
print("KEYS " + json.dumps(keys))
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("run_api")
    with model_server([], tmp_path) as model_url:
        env = app_environment(
            tmp_path,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="api-model",
            AGENTWEB_LLM_API_KEY=MODEL_KEY,
            AGENTWEB_LLM_MAX_ATTEMPTS="1",
            AGENTWEB_SSE_KEEPALIVE="0.5",
            # Enough for every test's sends; tests/api/test_run_api.py's flood passes it.
            AGENTWEB_SEND_BURST=str(SEND_BURST),
        )
        manage(env, "migrate", "--noinput")
        printed = manage(env, "shell", "-c", SETUP.format(people=PEOPLE))
        keys = json.loads(next(line for line in printed.splitlines() if line.startswith("KEYS "))[5:])
        with daphne(env) as base_url:
            yield {"base_url": base_url, "model_url": model_url, "keys": keys, "env": env}


def script(app, *entries: dict) -> None:
    """What the model answers next, in order (tests/support/model_server.py's CLI entries)."""
    httpx.post(f"{app['model_url']}/_script", json=list(entries)).raise_for_status()


def client(app, who: str = "ada", **kwargs) -> httpx.AsyncClient:
    """A program's client of /api/v1/ with `who`'s key."""
    headers = {"Authorization": f"Bearer {app['keys'][who]}", **kwargs.pop("headers", {})}
    return httpx.AsyncClient(base_url=f"{app['base_url']}/api/v1", headers=headers, timeout=30, **kwargs)


def cookie_of(app, who: str = "ada") -> str:
    return log_in(app["base_url"], who, PEOPLE[who])
