"""The app in the shape docs/deploy.md describes, for the production benchmarks: one PostgreSQL database (migrated
once per run), one Redis prefix, and Daphne processes and run workers started per benchmark.

The processes are tests/support's (`Daphne`, `Worker`, `production_environment`, `postgres_database`): the same
shape tests/e2e/test_production.py checks, measured here. Django is also set up in the bench process, on the same
database, to make users, sessions and threads through the ORM before the processes start; the benchmarks then
talk to the processes only over HTTP and websockets, as browsers would.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.processes import Daphne, Worker, manage
from tests.support.production import (
    POSTGRES_ADMIN_URL,
    REDIS_URL,
    forget_redis_prefix,
    postgres_database,
    production_environment,
    reachable,
)

from ..app import make_users, setup_django

#: Each process's PostgreSQL pool (AGENTWEB_DB_POOL_SIZE's default); "never above the pools' sum" is judged with it.
POOL_SIZE = 10


class NoServers(Exception):
    """PostgreSQL or Redis is not reachable: the production benchmarks cannot run."""


def servers_missing() -> str:
    """Why the production benchmarks cannot run here, or "" when PostgreSQL and Redis both answer."""
    missing = [
        name
        for name, url, port in (("PostgreSQL", POSTGRES_ADMIN_URL, 5432), ("Redis", REDIS_URL, 6379))
        if not reachable(url, port)
    ]
    return (
        f"{' and '.join(missing)} not reachable (AGENTWEB_TEST_POSTGRES_URL, AGENTWEB_TEST_REDIS_URL)"
        if missing
        else ""
    )


class VariantDaphne(Daphne):
    """tests/support's Daphne, serving the app with the variants of its BENCH_VARIANTS (bench/variant_asgi.py)."""

    def spawn(self, command: list[str]) -> int:
        swap = {"agentweb.serve": "bench.variant_serve", "agentweb.asgi:application": "bench.variant_asgi:application"}
        return super().spawn([swap.get(part, part) for part in command])


class VariantWorker(Worker):
    """tests/support's run worker, with the variants of its BENCH_VARIANTS (bench/variant_worker.py)."""

    def spawn(self, command: list[str]) -> int:
        assert command[1] == "manage.py", command
        return super().spawn([command[0], "-m", "bench.variant_worker", *command[2:]])


@dataclass
class Processes:
    """The Daphne processes and workers of one benchmark."""

    env: dict[str, str]
    daphnes: list[Daphne]
    workers: list[Worker] = field(default_factory=list)
    variant: str = ""

    def pids(self) -> dict[str, int]:
        named = {f"daphne-{n + 1}": d.process.pid for n, d in enumerate(self.daphnes)}
        named.update({f"worker-{n + 1}": w.process.pid for n, w in enumerate(self.workers) if w.process.poll() is None})
        return named

    def add_worker(self, name: str) -> Worker:
        worker = (VariantWorker if self.variant else Worker)(self.env, name=name).start()
        self.workers.append(worker)
        return worker


class ProductionApp:
    """`with ProductionApp(model_url) as app:` a migrated PostgreSQL database, a Redis prefix, users with sessions;
    `with app.processes(daphnes=2, workers=1) as running:` the processes of one benchmark."""

    def __init__(self, model_url: str, users: int = 200, variant: str = ""):
        #: bench/variant_asgi.py's variants for every process a benchmark starts ("": the app as it is); the A/B
        #: driver (bench/production/ab.py) changes it between benchmarks.
        self.variant = variant
        #: Whether the benchmarks measure their floors (an A/B compares the app with a variant; it skips them).
        self.floors = True
        self.model_url = model_url
        self.user_count = users
        self.tmp = Path(tempfile.mkdtemp(prefix="agentweb-bench-production-"))
        self.tool_log = self.tmp / "tool-runs.log"
        self.tool_release = self.tmp / "tool-release"
        self.users: list[tuple[int, str]] = []
        self.database_url = ""
        self._stack = ExitStack()

    def __enter__(self) -> ProductionApp:
        reason = servers_missing()
        if reason:
            raise NoServers(reason)
        self.database_url = self._stack.enter_context(postgres_database())
        self.env = production_environment(
            self.tmp,
            self.database_url,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{self.model_url}/v1",
            AGENTWEB_LLM_MODEL="bench",
            AGENTWEB_LLM_API_KEY="bench-key",
            AGENTWEB_LOG_LEVEL="WARNING",
            AGENTWEB_SEND_BURST="1000000",
            AGENTWEB_SEND_RATE_PER_MINUTE="1000000",
            # Many sockets of one user (idle-sockets opens 100 each): the cap per person would measure the cap.
            AGENTWEB_MAX_SOCKETS_PER_USER="0",
            AGENTWEB_TOOL_MODULES="bench.production.tools",
            AGENTWEB_DB_POOL_SIZE=str(POOL_SIZE),
            BENCH_TOOL_LOG=str(self.tool_log),
            BENCH_TOOL_RELEASE=str(self.tool_release),
            # The workers' priority below the Daphne processes' (docs/deploy.md): the app's default (10) unless
            # BENCH_WORKER_NICE says another, to measure it (BENCH_WORKER_NICE=0: the workers as the Daphne process).
            **({"AGENTWEB_WORKER_NICE": nice} if (nice := os.environ.get("BENCH_WORKER_NICE")) else {}),
        )
        manage(self.env, "migrate", "--noinput")
        os.environ["REDIS_URL"] = self.env["REDIS_URL"]  # setup_django copies only AGENTWEB_*, DJANGO_*, DATABASE_URL
        setup_django(self.env)
        self.users = make_users(self.user_count)
        self.close_django()
        return self

    def __exit__(self, *exc) -> None:
        self.close_django()
        self._stack.close()
        if getattr(self, "env", None):  # every benchmark's processes used a prefix made from this one
            forget_redis_prefix(self.env["AGENTWEB_REDIS_PREFIX"])
        shutil.rmtree(self.tmp, ignore_errors=True)

    @property
    def database_name(self) -> str:
        return self.database_url.rsplit("/", 1)[1]

    def close_django(self) -> None:
        """The bench process holds no connection while the app's are counted (its pool closed too)."""
        from django.db import connections

        for connection in connections.all():
            connection.close()
            close_pool = getattr(connection, "close_pool", None)
            if close_pool is not None:
                close_pool()

    def threads_for(self, users: list[tuple[int, str]], per_user: int = 1) -> list[str]:
        """`per_user` empty threads for each of `users`, in order; returns their ids."""
        from chat.models import Thread

        rows = [Thread(owner_id=user_id, title="bench") for user_id, _ in users for _ in range(per_user)]
        Thread.objects.bulk_create(rows)
        self.close_django()
        return [str(row.pk) for row in rows]

    def more_users(self, count: int) -> list[tuple[int, str]]:
        made = make_users(count)
        self.close_django()
        return made

    @contextmanager
    def processes(self, *, daphnes: int = 1, workers: int = 1, **extra: str):
        env = {
            **self.env,
            **extra,
            "AGENTWEB_REDIS_PREFIX": f"{self.env['AGENTWEB_REDIS_PREFIX']}-{uuid.uuid4().hex[:6]}",
            "BENCH_VARIANTS": self.variant,
        }
        with ExitStack() as stack:
            servers = []
            for _ in range(daphnes):
                server = (VariantDaphne if self.variant else Daphne)(env).start()
                stack.callback(server.stop)
                servers.append(server)
            running = Processes(env, servers, variant=self.variant)
            for n in range(workers):
                running.add_worker(f"worker-{secrets.token_hex(3)}-{n}")
            stack.callback(lambda: [w.stop() for w in running.workers])
            yield running


def ws_url(daphne: Daphne) -> str:
    return daphne.url.replace("http://", "ws://") + "/ws/chat/"


def rss_kib(pid: int) -> int:
    """The process's resident memory (VmRSS), KiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")
