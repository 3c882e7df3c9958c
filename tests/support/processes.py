"""Start the real app (Daphne) and the scripted model server as subprocesses, and log in like a browser."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 120) -> None:
    # Generous: on a loaded 2-core CI machine, starting Django and Daphne has taken over 30 s.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode}: {process.stdout and process.stdout.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listened on port {port} within {timeout} s")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def model_server(script: list[dict], tmp_path: Path):
    """The scripted OpenAI-compatible server in its own process; yields its base URL."""
    script_file = tmp_path / "model_script.json"
    script_file.write_text(json.dumps(script))
    process = subprocess.Popen(
        [PYTHON, "-m", "tests.support.model_server", "--script", str(script_file)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        first_line = process.stdout.readline()
        port = int(re.fullmatch(r"PORT (\d+)\s*", first_line).group(1))
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def app_environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AGENTWEB_", "DJANGO_"))}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'e2e.sqlite3'}",
        DJANGO_SETTINGS_MODULE="agentweb.settings",
        PYTHONUNBUFFERED="1",
        AGENTWEB_TEST_LOG_DIR=str(tmp_path),
        AGENTWEB_MEDIA_ROOT=str(tmp_path / "media"),  # uploads: never the checkout's media/
        AGENTWEB_VAPID_KEY_FILE=str(tmp_path / "vapid_key"),  # the Web Push key: never the checkout's
    )
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=120
    )
    return result.stdout


def create_user(env: dict[str, str], username: str, password: str) -> None:
    """A user of the app whose database `env` names, who can then log in with this password."""
    manage(
        env,
        "shell",
        "-c",
        f"from django.contrib.auth.models import User; User.objects.create_user({username!r}, password={password!r})",
    )


class AppProcess:
    """A process of the app, logging to a file, that a test may kill (as a crash would) and start again."""

    def __init__(self, env: dict[str, str], log_name: str):
        self.env = env
        self.log_path = Path(env["AGENTWEB_TEST_LOG_DIR"]) / log_name
        self.process: subprocess.Popen | None = None

    def spawn(self, command: list[str]) -> int:
        """Start `command`; returns where this start's lines begin in the log."""
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "a")  # noqa: SIM115 (the process writes to it while it runs)
        self.process = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        return offset

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def kill(self) -> None:
        """No shutdown, no cleanup."""
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process)


class Daphne(AppProcess):
    """The app as `make run` serves it."""

    def __init__(self, env: dict[str, str], port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        super().__init__(env, f"daphne-{self.port}.log")

    def start(self) -> Daphne:
        self.spawn(
            [PYTHON, "-m", "agentweb.serve", "-b", "127.0.0.1", "-p", str(self.port), "agentweb.asgi:application"]
        )
        try:
            wait_for_port(self.port, self.process)
        except (TimeoutError, RuntimeError) as error:
            raise RuntimeError(f"{error}; Daphne's log ends with:\n{self.log_tail()}") from error
        return self


class Worker(AppProcess):
    """`manage.py runworker agentweb-runs`, as docs/deploy.md runs it."""

    READY = "Running worker for channels"

    def __init__(self, env: dict[str, str], name: str = "worker"):
        super().__init__(env, f"{name}.log")

    def start(self, timeout: float = 120) -> Worker:
        offset = self.spawn([PYTHON, "manage.py", "runworker", "agentweb-runs"])
        deadline = time.monotonic() + timeout
        while self.READY not in self.log_path.read_text(errors="replace")[offset:]:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start; its log ends with:\n{self.log_tail()}")
            time.sleep(0.1)
        return self


@contextmanager
def daphne(env: dict[str, str]):
    """The app as `make run` serves it; yields its base URL."""
    server = Daphne(env).start()
    try:
        yield server.url
    finally:
        server.stop()


def log_in(base_url: str, username: str, password: str) -> str:
    """Log in through the real login form; returns the Cookie header a browser would then send."""
    with httpx.Client(base_url=base_url) as client:
        page = client.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        response = client.post(
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token, "next": "/"},
            headers={"Referer": f"{base_url}/accounts/login/"},
        )
        assert response.status_code == 302, response.text[:500]
        return "; ".join(f"{name}={value}" for name, value in client.cookies.items())


@contextmanager
def served_app(tmp_path: Path, users: dict[str, str], **environment: str):
    """The app as `make run` serves it on a database of its own in `tmp_path`, migrated, with these users (name →
    password) and the AGENTWEB_* / DJANGO_* settings given; yields (its base URL, its environment)."""
    env = app_environment(tmp_path, **environment)
    manage(env, "migrate", "--noinput")
    for username, password in users.items():
        create_user(env, username, password)
    with daphne(env) as base_url:
        yield base_url, env
