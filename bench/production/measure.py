"""What the production benchmarks measure with: the load-client processes, PostgreSQL's connection count, the
processes' CPU from /proc, and the sockets' targets."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from contextlib import contextmanager

from tests.support.processes import Daphne
from tests.support.production import POSTGRES_ADMIN_URL

from ..common import PYTHON, ROOT, clean_env, cpu_seconds


def target(daphne: Daphne, cookie: str, **fields) -> dict:
    """Where a load client's socket connects, as whom, and what for."""
    return {
        "url": daphne.url.replace("http://", "ws://") + "/ws/chat/",
        "origin": daphne.url,
        "cookie": cookie,
        **fields,
    }


def spawn_client(mode: str, job: dict) -> subprocess.Popen:
    """A load client (bench/production/loadclient.py) in its own process, given its job."""
    process = subprocess.Popen(
        [PYTHON, "-m", "bench.production.loadclient", mode],
        cwd=ROOT,
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    process.stdin.write(json.dumps(job) + "\n")
    process.stdin.flush()
    return process


def client_result(process: subprocess.Popen, timeout: float = 900) -> dict:
    out, _ = process.communicate(timeout=timeout)
    if process.returncode:
        raise RuntimeError(f"a load client failed ({process.returncode})")
    return json.loads(out.strip().splitlines()[-1])


def run_clients(mode: str, jobs: list[dict], timeout: float = 900) -> list[dict]:
    processes = [spawn_client(mode, job) for job in jobs]
    return [client_result(p, timeout) for p in processes]


class CpuMeters:
    """CPU seconds of several named processes since the meters were made."""

    def __init__(self, pids: dict[str, int]):
        self.pids = pids
        self.start = {name: cpu_seconds(pid) for name, pid in pids.items()}
        self.wall0 = time.perf_counter()

    def read(self) -> tuple[dict[str, float], float]:
        used = {}
        for name, pid in self.pids.items():
            try:
                used[name] = cpu_seconds(pid) - self.start[name]
            except FileNotFoundError:  # killed meanwhile
                used[name] = None
        return used, time.perf_counter() - self.wall0


def connection_count(database: str) -> int:
    """Connections to `database` on the PostgreSQL server, not counting the one asking."""
    import psycopg

    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (database,)
        ).fetchone()[0]


class ConnectionWatch:
    """Samples the database's connection count every `interval` s in a thread; `most` is the highest seen."""

    def __init__(self, database: str, interval: float = 0.25):
        self.database = database
        self.interval = interval
        self.most = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as conn:
            while not self._stop.is_set():
                count = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self.database,)
                ).fetchone()[0]
                self.most = max(self.most, count)
                self.samples += 1
                self._stop.wait(self.interval)

    def __enter__(self) -> ConnectionWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def watched_connections(result, app, processes: int):
    """Record the most connections the app's processes held meanwhile, against the sum of their pools."""
    from .cluster import POOL_SIZE

    with ConnectionWatch(app.database_name) as watch:
        yield watch
    result.details["connections_most"] = watch.most
    result.details["connections_allowed"] = processes * POOL_SIZE
    result.details["connection_samples"] = watch.samples
