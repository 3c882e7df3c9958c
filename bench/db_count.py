"""db-per-message: the SQL statements of one turn, counted in-process.

The real consumer (chat.consumers.ChatConsumer, behind channels' session and auth middleware, with a real
session cookie) runs under channels' WebsocketCommunicator in a process of its own, on a copy of the freshly
migrated bench database, against the bench model server. Every statement
Django executes, in any thread, goes through an execute wrapper (installed on each connection as it is
made, via the connection_created signal) that records its kind, its time, its duration and the app
function that issued it. Connection opens are counted and timed too (conn_max_age=0: every
database_sync_to_async call opens and closes one).

A turn: step 1 streams 3 calculator calls, the tools run, step 2 streams the text answer; the turn's
tokens are paced (3,000 tokens/s, as in relay-3000) so that a longer answer also takes longer, as it would
from a real model. A warm-up turn runs first and is not counted.

    python -m bench.db_count --model-url URL --turns '[{"tokens": 2000, "tools": 3, "rate": 3000}, ...]'

(with the app's environment: DATABASE_URL, AGENTWEB_LLM_*) prints one JSON line, one entry per turn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT_DIRS = ("chat", "tools", "modelconfig", "agentweb")
# A turn stays under this many statements, the same for a short and a long answer (tests/chat/test_query_counts.py).
MOST_STATEMENTS = 20
# Crash safety, not the turn's: once an answer has streamed AGENTWEB_FLUSH_INTERVAL (2 s), the process's one flush
# writes its text every interval, in one statement for all its streaming answers (chat/flush.py). A paced 20,000-token
# answer streams for about 7 s: those statements are counted apart.
FLUSH = "chat/store/steps.py:save_streaming_texts"


def turn_statements(turn: dict) -> int:
    """The turn's statements, less the crash-safety flushes its streaming time called for."""
    return turn["statements"] - turn["by_function"].get(FLUSH, 0)


class StatementLog:
    def __init__(self):
        self.records: list[tuple[int, str, str, int]] = []  # (time_ns, kind, where, duration_ns)
        self.opens: list[tuple[int, int]] = []  # (time_ns, duration_ns)
        # (start time_ns, wall ns, wall ns in the worker thread, name, CPU ns of the worker thread)
        self.hops: list[tuple[int, int, int, str, int]] = []
        self.lock = threading.Lock()

    def __call__(self, execute, sql, params, many, context):
        start = time.perf_counter_ns()
        try:
            return execute(sql, params, many, context)
        finally:
            duration = time.perf_counter_ns() - start
            where = caller()
            if where == "?":  # the async ORM's own thread hop leaves no app frame on this stack
                table = re.search(r'(?:FROM|INTO|UPDATE) "(\w+)"', sql)
                where = f"async ORM ({sql.split(None, 1)[0].upper()} {table.group(1) if table else '?'})"
            with self.lock:
                self.records.append((time.time_ns(), sql.split(None, 1)[0].upper(), where, duration))

    def reset(self) -> None:
        with self.lock:
            self.records.clear()
            self.opens.clear()
            self.hops.clear()


def caller() -> str:
    """The innermost frame of the app's own code (not Django's, not asgiref's) that led to this statement."""
    frame = sys._getframe(2)
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        try:
            relative = path.relative_to(ROOT)
        except ValueError:
            relative = None
        if relative is not None and relative.parts[0] in PROJECT_DIRS:
            return f"{relative.as_posix()}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


def install(log: StatementLog) -> None:
    from django.db import connections
    from django.db.backends.signals import connection_created
    from django.db.backends.sqlite3.base import DatabaseWrapper

    def add(connection, **_):
        if log not in connection.execute_wrappers:
            connection.execute_wrappers.append(log)

    connection_created.connect(add, weak=False)
    add(connections["default"])
    original = DatabaseWrapper.get_new_connection

    def timed(self, conn_params):
        start = time.perf_counter_ns()
        try:
            return original(self, conn_params)
        finally:
            with log.lock:
                log.opens.append((time.time_ns(), time.perf_counter_ns() - start))

    DatabaseWrapper.get_new_connection = timed

    # Every sync_to_async call (database_sync_to_async, the async ORM, channels' aclose_old_connections) is a hop
    # to the worker thread and back: time the hop and the function's own run in the thread.
    from asgiref.sync import SyncToAsync

    original_call = SyncToAsync.__call__

    async def hop(self, *args, **kwargs):
        inner = self.func
        ran = [0, 0]

        def timed_func(*a, **k):
            start, cpu = time.perf_counter_ns(), time.thread_time_ns()
            try:
                return inner(*a, **k)
            finally:
                ran[0] = time.perf_counter_ns() - start
                ran[1] = time.thread_time_ns() - cpu

        self.func = timed_func
        started, t0 = time.time_ns(), time.perf_counter_ns()
        try:
            return await original_call(self, *args, **kwargs)
        finally:
            self.func = inner
            name = getattr(inner, "__qualname__", None) or type(inner).__name__
            with log.lock:
                log.hops.append((started, time.perf_counter_ns() - t0, ran[0], name, ran[1]))

    SyncToAsync.__call__ = hop


def communicator_class():
    """channels' WebsocketCommunicator without its one test convenience: it swaps channels.db's
    close_old_connections for a no-op while a test waits on it, so a test's transaction survives. Daphne
    does close old connections (on every dispatched message and around every database_sync_to_async call),
    and with CONN_MAX_AGE=0 that means reopening them; counting under the swap would hide that."""
    from asgiref.testing import ApplicationCommunicator
    from channels.testing import WebsocketCommunicator

    class RealCommunicator(WebsocketCommunicator):
        async def send_input(self, message):
            return await ApplicationCommunicator.send_input(self, message)

        async def receive_output(self, timeout=1):
            return await ApplicationCommunicator.receive_output(self, timeout)

    return RealCommunicator


async def run(model_url: str, turns: list[dict]) -> list[dict]:
    import httpx
    from channels.db import database_sync_to_async
    from channels.routing import URLRouter

    from agentweb.socket_auth import SocketAuthMiddlewareStack
    from chat.routing import websocket_urlpatterns

    from .app import TERMINAL, make_users
    from .tokens import Spec

    RealCommunicator = communicator_class()
    http = httpx.AsyncClient()
    log = StatementLog()
    install(log)
    ((_, cookie),) = await database_sync_to_async(make_users)(1)
    # The consumer as Daphne runs it: behind the session and auth middleware, with a real session cookie.
    application = SocketAuthMiddlewareStack(URLRouter(websocket_urlpatterns))
    communicator = RealCommunicator(application, "/ws/chat/", headers=[(b"cookie", cookie.encode())])
    connected, _ = await communicator.connect()
    assert connected

    async def turn(spec: Spec, thread: str | None) -> tuple[str, float, str]:
        frame = {
            "type": "message.send",
            "thread": thread,
            "content": spec.message(),
            "client_msg_id": str(uuid.uuid4()),
        }
        t0 = time.time_ns()
        await communicator.send_to(text_data=json.dumps(frame))
        while True:
            event = json.loads(await communicator.receive_from(timeout=300))
            thread = thread or event.get("thread")
            if event["type"] in TERMINAL:
                if event["type"] != "run.completed":
                    raise RuntimeError(f"the run did not complete: {event}")
                return thread, t0, event["type"]
            if event["type"] == "error":
                raise RuntimeError(f"refused: {event}")

    out = []
    thread, _, _ = await turn(Spec(id=f"db-warm-{uuid.uuid4().hex[:8]}", tokens=20, tools=1), None)
    await turn(Spec(id=f"db-warm-{uuid.uuid4().hex[:8]}", tokens=20, tools=1), thread)
    for values in turns:
        spec = Spec(**{**values, "id": f"db-{uuid.uuid4().hex[:12]}"})
        log.reset()
        started = time.perf_counter()
        _, t0, _ = await turn(spec, thread)
        seconds = time.perf_counter() - started
        await asyncio.sleep(0.05)  # anything written just after run.completed belongs to the turn too
        records, opens, hops = list(log.records), list(log.opens), list(log.hops)
        records_seen = (await http.get(f"{model_url}/_log", params={"id": spec.id})).json()
        requests = sorted(r["t_request"] for r in records_seen)
        first_request = requests[0] if requests else None
        before = [r for r in records if first_request and r[0] < first_request]
        out.append(
            {
                "tokens": spec.tokens,
                "tools": spec.tools,
                "rate": spec.rate,
                "seconds": seconds,
                "statements": len(records),
                "by_kind": dict(Counter(r[1] for r in records).most_common()),
                "by_function": dict(Counter(r[2] for r in records).most_common()),
                "db_ms": sum(r[3] for r in records) / 1e6,
                "hops": len(hops),
                "hops_by_function": dict(Counter(h[3] for h in hops).most_common()),
                "connection_opens": len(opens),
                "connection_open_ms": sum(d for _, d in opens) / 1e6,
                "before_first_request": {
                    "ms": (first_request - t0) / 1e6 if first_request else None,
                    "statements": len(before),
                    "db_ms": sum(r[3] for r in before) / 1e6,
                    "connection_opens": len([o for o in opens if first_request and o[0] < first_request]),
                    "connection_open_ms": sum(d for t, d in opens if first_request and t < first_request) / 1e6,
                    "hops": len(early := [h for h in hops if first_request and h[0] < first_request]),
                    "hop_wall_ms": sum(h[1] for h in early) / 1e6,
                    "hop_in_thread_ms": sum(h[2] for h in early) / 1e6,
                    "hop_thread_cpu_ms": sum(h[4] for h in early) / 1e6,
                    # name: [hop wall ms, wall ms in the worker thread, CPU ms of the worker thread]
                    "hops_by_function": {
                        name: [round(sum(h[i] for h in early if h[3] == name) / 1e6, 2) for i in (1, 2, 4)]
                        for name in dict.fromkeys(h[3] for h in early)
                    },
                    "by_function": dict(Counter(r[2] for r in before).most_common()),
                },
            }
        )
    await communicator.disconnect()
    await http.aclose()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Count the SQL statements of chat turns, in-process.")
    parser.add_argument("--model-url", required=True)
    parser.add_argument("--turns", required=True, help="JSON list of bench.tokens.Spec fields")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")
    import django

    django.setup()
    print(json.dumps(asyncio.run(run(args.model_url, json.loads(args.turns)))))


# --- the benchmark, run from `python -m bench` -------------------------------------------------------


async def db_per_message(app, result, smoke: bool) -> None:
    import shutil

    from .app import app_env
    from .common import run_json

    db = app.tmp / "db_count.sqlite3"
    shutil.copy(app.migrated_copy, db)
    small, large = (200, 2000) if smoke else (2000, 20000)
    rate = 0 if smoke else 3000
    turns = [{"tokens": small, "tools": 3, "rate": rate}, {"tokens": large, "tools": 3, "rate": rate}]
    env = app_env(db, app.model_url)
    a, b = await asyncio.to_thread(
        run_json, ["-m", "bench.db_count", "--model-url", app.model_url, "--turns", json.dumps(turns)], env
    )
    result.details.update(turns=[a, b])
    a_count, b_count = turn_statements(a), turn_statements(b)
    same = a_count == b_count
    result.add(
        f"SQL statements, {small:,} tokens + 3 tool calls",
        a_count,
        "",
        target=f"< {MOST_STATEMENTS}",
        passed=a_count < MOST_STATEMENTS,
        note=f"{a['connection_opens']} connection opens; {a['before_first_request']['statements']} statements "
        f"before the model request; {a['statements'] - a_count} crash-safety flush(es) not counted",
    )
    result.add(
        f"SQL statements, {large:,} tokens + 3 tool calls",
        b_count,
        "",
        target=f"same count, < {MOST_STATEMENTS}",
        floor=a_count,
        passed=same and b_count < MOST_STATEMENTS,
        note=f"{b_count - a_count:+d} vs the {small:,}-token turn; floor: the {small:,}-token turn; "
        f"{b['statements'] - b_count} crash-safety flush(es) of its streaming text not counted (chat/flush.py)",
    )


if __name__ == "__main__":
    main()
