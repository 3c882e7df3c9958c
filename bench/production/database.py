"""database: statements per turn on PostgreSQL (with Redis) against SQLite's (`make bench`'s db-per-message,
counted the same way in the same run); the most connections the app's processes held during every production
benchmark, against the sum of their pools; and 10,000 socket connect/disconnect cycles leaving the connection
count where it was."""

from __future__ import annotations

import asyncio
import json
import time

from tests.support.processes import manage

from ..app import app_env
from ..common import Result, run_json
from .cluster import POOL_SIZE, ProductionApp
from .measure import connection_count, run_clients, target, watched_connections

SETTLE_S = 3.0


def statements(app: ProductionApp, env: dict[str, str], turns: list[dict]) -> list[dict]:
    return run_json(["-m", "bench.db_count", "--model-url", app.model_url, "--turns", json.dumps(turns)], env)


def sqlite_env(app: ProductionApp) -> dict[str, str]:
    db = app.tmp / "db_count.sqlite3"
    env = app_env(db, app.model_url)
    manage({**env, "AGENTWEB_TEST_LOG_DIR": str(app.tmp)}, "migrate", "--noinput")
    return env


def postgres_env(app: ProductionApp, redis: bool) -> dict[str, str]:
    """The production database (and Redis), runs in the counting process (no workers): every statement of a turn
    is made where it is counted."""
    env = app_env(app.tmp / "unused.sqlite3", app.model_url)
    keep = ("DATABASE_URL", "AGENTWEB_SECRET_KEYS", "AGENTWEB_DB_POOL_SIZE")
    keep += ("REDIS_URL", "AGENTWEB_REDIS_PREFIX") if redis else ()
    env.update({k: app.env[k] for k in keep})
    return env


def without_begin(counted: dict) -> int:
    """Statements but BEGIN: SQLite's transactions begin with a statement Django executes (and the wrapper counts),
    PostgreSQL's inside psycopg, unseen; the work is the same."""
    return counted["statements"] - counted["by_kind"].get("BEGIN", 0)


async def database(app: ProductionApp, result: Result, smoke: bool) -> None:
    tokens = 200 if smoke else 2000
    turns = [{"tokens": tokens, "tools": 3, "rate": 0 if smoke else 3000}]
    (on_sqlite,) = await asyncio.to_thread(statements, app, await asyncio.to_thread(sqlite_env, app), turns)
    (on_postgres,) = await asyncio.to_thread(statements, app, postgres_env(app, redis=False), turns)
    (with_redis,) = await asyncio.to_thread(statements, app, postgres_env(app, redis=True), turns)
    cycles = 100 if smoke else 10_000
    cookies = [cookie for _, cookie in app.users[:20]]
    with app.processes(daphnes=2, workers=1) as running, watched_connections(result, app, 3) as watch:
        targets = [target(running.daphnes[n % 2], cookie) for n, cookie in enumerate(cookies)]
        await asyncio.to_thread(run_clients, "cycles", [{"targets": targets, "count": 40, "concurrency": 20}])
        await asyncio.sleep(SETTLE_S)
        before = connection_count(app.database_name)
        started = time.perf_counter()
        jobs = [{"targets": targets[k::2], "count": cycles // 2, "concurrency": 20} for k in range(2)]
        outputs = await asyncio.to_thread(run_clients, "cycles", jobs)
        seconds = time.perf_counter() - started
        await asyncio.sleep(SETTLE_S)
        after = connection_count(app.database_name)
    done = sum(o["cycles"] for o in outputs)
    failed = sum(o["failed"] for o in outputs)
    result.details.update(
        sqlite=on_sqlite,
        postgres=on_postgres,
        postgres_redis=with_redis,
        cycles=outputs,
        before=before,
        after=after,
        cycle_seconds=seconds,
    )
    extra = {
        name: count - on_postgres["by_function"].get(name, 0)
        for name, count in with_redis["by_function"].items()
        if count > on_postgres["by_function"].get(name, 0)
    }
    result.add(
        f"SQL statements per turn on PostgreSQL, {tokens:,} tokens + 3 tool calls",
        without_begin(on_postgres),
        "",
        target="= SQLite's",
        floor=without_begin(on_sqlite),
        passed=without_begin(on_postgres) == without_begin(on_sqlite),
        note=f"BEGIN not counted (SQLite's are statements, PostgreSQL's are not: "
        f"{on_sqlite['by_kind'].get('BEGIN', 0)} on SQLite); counted in-process as db-per-message counts them; "
        "floor: SQLite",
    )
    result.add(
        "SQL statements per turn on PostgreSQL with Redis",
        without_begin(with_redis),
        "",
        floor=without_begin(on_sqlite),
        note=f"several processes' shape (the Redis event log; no workers, so every statement is counted here); "
        f"beyond PostgreSQL alone: {extra or 'none'}",
    )
    most = max([r.details["connections_most"] for r in app.results if "connections_most" in r.details] + [watch.most])
    allowed = {r.name: r.details["connections_allowed"] for r in app.results if "connections_allowed" in r.details}
    over = {
        r.name: r.details["connections_most"]
        for r in [*app.results, result]
        if "connections_most" in r.details and r.details["connections_most"] > r.details["connections_allowed"]
    }
    result.add(
        "most PostgreSQL connections, every benchmark",
        most,
        "",
        target="≤ the pools' sum",
        passed=not over,
        note=f"sampled every 0.25 s; pools' sums (processes × {POOL_SIZE}): "
        + ", ".join(f"{name} {n}" for name, n in {**allowed, result.name: 3 * POOL_SIZE}.items())
        + (f"; over in {over}" if over else ""),
    )
    result.add(
        f"PostgreSQL connections after {done:,} socket connect/disconnect cycles",
        after,
        "",
        target="= before",
        floor=before,
        passed=after <= before and failed == 0 and done == cycles,
        note=f"2 Daphne processes and a worker; {failed} cycles failed; {done / seconds:,.0f} cycles/s; "
        f"most during: {watch.most}; floor: the count before",
    )
