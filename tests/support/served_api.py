"""The app as `make run` serves it (Daphne, a database of its own) with the scripted model server as its model and
API keys made for its people: what the API's and the notifications' end-to-end tests each start.

    with served_api(tmp_path, {"ada": PASSWORD}, keys={"ada": Key("ada")}, AGENTWEB_SSE_KEEPALIVE="0.2") as app:
        app["model"].enqueue(...)                     # what the model answers next
        openai.OpenAI(base_url=app["base_url"] + "/v1", api_key=app["keys"]["ada"])

People, keys and `setup` (Python run by `manage.py shell` after them, `keys` in scope) are made in one shell."""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.model_server import ScriptedModelServer
from tests.support.processes import app_environment, daphne, manage


@dataclass(frozen=True)
class Key:
    """An API key of `user`, named `name`; `then`: Python run on its row (`row`) once made (revoke it, expire it)."""

    user: str
    name: str = "tests"
    then: str = ""


MAKE = """
import datetime, json
from django.contrib.auth.models import User
from django.utils import timezone
from api.models import ApiKey
for name, password in {people!r}.items():
    User.objects.create_user(name, password=password)
keys = {{}}
{keys}
{setup}
print("KEYS " + json.dumps(keys))
"""


def key_code(label: str, key: Key) -> str:
    made = f"row, keys[{label!r}] = ApiKey.issue(User.objects.get(username={key.user!r}), {key.name!r})"
    return f"{made}; {key.then}" if key.then else made


def make_people_and_keys(env: dict[str, str], people: dict[str, str], keys: dict[str, Key], setup: str = "") -> dict:
    """The people (name → password) and their keys (label → Key) in the app whose database `env` names; label → key."""
    code = MAKE.format(
        people=people, keys="\n".join(key_code(label, key) for label, key in keys.items()), setup=setup.strip()
    )
    printed = manage(env, "shell", "-c", code)
    return json.loads(next(line for line in printed.splitlines() if line.startswith("KEYS "))[5:])


@contextmanager
def served_api(tmp_path: Path, people: dict[str, str], *, keys: dict[str, Key], setup: str = "", **environment: str):
    """The served app, its model the scripted server (AGENTWEB_LLM_* may be given to override the defaults); yields
    {"base_url", "env", "model" (the ScriptedModelServer), "model_url" (its root), "keys" (label → key)}."""
    with ScriptedModelServer() as model:
        llm = {"AGENTWEB_LLM_API": "openai", "AGENTWEB_LLM_BASE_URL": model.base_url, "AGENTWEB_LLM_MODEL": "scripted"}
        env = app_environment(tmp_path, **{**llm, **environment})
        manage(env, "migrate", "--noinput")
        made = make_people_and_keys(env, people, keys, setup)  # before the server starts, as a deployment's are
        with daphne(env) as base_url:
            yield {"base_url": base_url, "env": env, "model": model, "model_url": model.root_url, "keys": made}
