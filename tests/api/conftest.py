"""The run API against the app as `make run` serves it (Daphne, its own SQLite database) and the scripted model
server (tests/support/served_api.py): a program's real HTTP requests with a real key, nothing patched."""

from __future__ import annotations

import httpx
import pytest

from tests.support.processes import log_in
from tests.support.served_api import Key, served_api

SEND_BURST = 40
MODEL_KEY = "sk-run-api-secret-never-shown"
PEOPLE = {"ada": "lovelace-1815", "stranger": "stranger-password-1", "hasty": "hasty-password-1"}
SETUP = """
from tools.models import ToolSetting
from tools.services import sync_tool_settings
sync_tool_settings()
ToolSetting.objects.filter(name="current_time").update(requires_approval=True)
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with served_api(
        tmp_path_factory.mktemp("run_api"),
        PEOPLE,
        keys={
            **{name: Key(name) for name in PEOPLE},
            "revoked": Key("ada", "revoked", "row.revoke()"),
        },
        setup=SETUP,
        AGENTWEB_LLM_MODEL="api-model",
        AGENTWEB_LLM_API_KEY=MODEL_KEY,
        AGENTWEB_LLM_MAX_ATTEMPTS="1",
        AGENTWEB_SSE_KEEPALIVE="0.5",
        # Enough for every test's sends; tests/api/test_run_api.py's flood passes it.
        AGENTWEB_SEND_BURST=str(SEND_BURST),
    ) as app:
        yield app


def script(app, *entries: dict) -> None:
    """What the model answers next, in order (tests/support/model_server.py's CLI entries)."""
    httpx.post(f"{app['model_url']}/_script", json=list(entries)).raise_for_status()


def client(app, who: str = "ada", **kwargs) -> httpx.AsyncClient:
    """A program's client of /api/v1/ with `who`'s key."""
    headers = {"Authorization": f"Bearer {app['keys'][who]}", **kwargs.pop("headers", {})}
    return httpx.AsyncClient(base_url=f"{app['base_url']}/api/v1", headers=headers, timeout=30, **kwargs)


def cookie_of(app, who: str = "ada") -> str:
    return log_in(app["base_url"], who, PEOPLE[who])
