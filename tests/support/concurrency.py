"""Requests at once against the real database: the app's code run in many threads of one `manage.py shell`, each
with its own connection, released together by a barrier. On SQLite (a file, as `make run` keeps it) and on
PostgreSQL (a database of its own on the test server, tests/support/production.py), where the locking differs.
"""

from __future__ import annotations

import json
import textwrap
from contextlib import contextmanager
from pathlib import Path

from .processes import app_environment, manage
from .production import postgres_database, require_servers

DATABASES = ("sqlite", "postgresql")

RUNNER = """
import json, threading
from django.db import connection

{setup}

COUNT = {count}
barrier = threading.Barrier(COUNT)
outcomes = [None] * COUNT


def work(n):
    barrier.wait()
    try:
        attempt(n)
        outcomes[n] = "ok"
    except Exception as error:
        outcomes[n] = type(error).__name__
    finally:
        connection.close()


threads = [threading.Thread(target=work, args=(n,)) for n in range(COUNT)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("OUTCOME " + json.dumps({{"outcomes": outcomes, "after": after()}}))
"""


@contextmanager
def migrated(database: str, tmp_path: Path):
    """The environment of an app on a freshly migrated `database` ("sqlite" or "postgresql")."""
    if database == "sqlite":
        env = app_environment(tmp_path)
        manage(env, "migrate", "--noinput")
        yield env
        return
    require_servers()
    with postgres_database() as url:
        env = app_environment(tmp_path, DATABASE_URL=url)
        manage(env, "migrate", "--noinput")
        yield env


def at_once(env: dict[str, str], setup: str, count: int) -> tuple[list[str], object]:
    """Run `setup` (which defines `attempt(n)` and `after()`), then `attempt(0)` … `attempt(count - 1)` in as many
    threads at once. Returns each attempt's outcome ("ok", or the class name of what it raised) and `after()`."""
    script = RUNNER.format(setup=textwrap.dedent(setup), count=count)
    output = manage(env, "shell", "-c", script)
    line = next(line for line in output.splitlines() if line.startswith("OUTCOME "))
    found = json.loads(line.removeprefix("OUTCOME "))
    return found["outcomes"], found["after"]
