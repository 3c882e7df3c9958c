"""The app as docs/deploy.md runs it: PostgreSQL, Redis, several Daphne processes and a run worker.

Each use gets a database of its own on the PostgreSQL server and a channel-layer prefix of its own on the
Redis server, so test runs (and a developer's app) sharing those servers never see each other's rows or
messages; both are removed afterwards (`forget_redis_prefix` for Redis). Outside CI, tests skip when either
server cannot be reached; in CI they fail.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .processes import Daphne, Worker, app_environment, manage

POSTGRES_ADMIN_URL = os.environ.get("AGENTWEB_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("AGENTWEB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def reachable(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or default_port), timeout=2):
            return True
    except OSError:
        return False


def require_servers() -> None:
    """Skip (fail in CI) when PostgreSQL or Redis is not there."""
    missing = [
        name
        for name, url, port in (("PostgreSQL", POSTGRES_ADMIN_URL, 5432), ("Redis", REDIS_URL, 6379))
        if not reachable(url, port)
    ]
    if missing:
        message = f"{' and '.join(missing)} not reachable (AGENTWEB_TEST_POSTGRES_URL, AGENTWEB_TEST_REDIS_URL)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@contextmanager
def postgres_database():
    """A fresh, empty database on the PostgreSQL server; dropped afterwards. Yields its URL."""
    import psycopg

    name = f"agentweb_test_{secrets.token_hex(6)}"
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlsplit(POSTGRES_ADMIN_URL)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def production_environment(
    tmp_path: Path, database_url: str, *, redis_url: str = REDIS_URL, **extra: str
) -> dict[str, str]:
    """DEBUG off, a real secret key, PostgreSQL, Redis (`redis_url`) under a prefix of its own, runs in workers.
    Cookies are not marked Secure only because the tests speak plain HTTP to 127.0.0.1."""
    from cryptography.fernet import Fernet

    return app_environment(
        tmp_path,
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        AGENTWEB_REDIS_PREFIX=f"agentweb-test-{secrets.token_hex(4)}",
        AGENTWEB_RUN_WORKERS="true",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_SECURE_COOKIES="false",
        AGENTWEB_SECRET_KEYS=Fernet.generate_key().decode(),
        **extra,
    )


def forget_redis_prefix(prefix: str, redis_url: str = REDIS_URL) -> None:
    """Delete what was kept on the Redis server under `prefix` (the prefixes made from it, `prefix-…`, and the channel
    layer's keys, `prefixspecific.…`, included), as a test's database is dropped: the event log's counters never
    expire, and its tails and groups only after a day. Prefixes are all of one length, so no other's keys match."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 1000):
            client.unlink(*keys[start : start + 1000])
    finally:
        client.close()


@dataclass
class Cluster:
    env: dict[str, str]
    daphnes: list[Daphne]
    worker: Worker

    def manage(self, *args: str) -> str:
        return manage(self.env, *args)


@contextmanager
def cluster(tmp_path: Path, *, daphnes: int = 2, setup: str = "", redis_url: str = REDIS_URL, **extra: str):
    """Migrate a fresh PostgreSQL database, run `setup` in `manage.py shell`, then start `daphnes` Daphne
    processes and one worker, all sharing the database and Redis (`redis_url`: the machine's, unless a test
    started one of its own: `own_redis`)."""
    require_servers()
    with postgres_database() as database_url, ExitStack() as stack:
        env = production_environment(tmp_path, database_url, redis_url=redis_url, **extra)
        # Last, once the processes have stopped.
        stack.callback(forget_redis_prefix, env["AGENTWEB_REDIS_PREFIX"], redis_url)
        manage(env, "migrate", "--noinput")
        if setup:
            manage(env, "shell", "-c", setup)
        servers = []
        for _ in range(daphnes):
            server = Daphne(env).start()
            stack.callback(server.stop)
            servers.append(server)
        running = Cluster(env, servers, Worker(env).start())
        # The worker a test put in place of the first (after killing it) is the one to stop.
        stack.callback(lambda: running.worker.stop())
        yield running


class OwnRedis:
    """A Redis server of the test's own, on a free port, keeping nothing on disk: a test may kill it (as a crash or
    a restart would) and start it again on the same port, empty, without touching the machine's Redis."""

    def __init__(self, tmp_path: Path):
        from .processes import free_port

        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.directory = tmp_path
        self.process: subprocess.Popen | None = None

    def start(self) -> OwnRedis:
        from .processes import wait_for_port

        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            command, cwd=self.directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for_port(self.port, self.process, timeout=30)
        return self

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()


@contextmanager
def own_redis(tmp_path: Path):
    """A Redis server of the test's own (OwnRedis), stopped afterwards; skipped without redis-server."""
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server to start")
    server = OwnRedis(tmp_path).start()
    try:
        yield server
    finally:
        server.stop()
