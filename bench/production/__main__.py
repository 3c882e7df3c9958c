"""Run the production benchmarks: `python -m bench.production` (all, then rewrite docs/performance.md's
"Production shape" section), `--smoke` (each for a moment, nothing judged or written), `--only relay-redis,…`.

PostgreSQL and Redis must be reachable (AGENTWEB_TEST_POSTGRES_URL, AGENTWEB_TEST_REDIS_URL; loopback defaults,
as in CI): without them it says so and exits 2."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
import traceback
from datetime import UTC, datetime

from ..common import ROOT, Result, bench_model_server, load_average, machine, print_result
from . import report
from .cluster import NoServers, ProductionApp, servers_missing
from .database import database
from .due_schedules import due_schedules
from .idle import idle_sockets
from .many_streams import many_streams
from .relay_redis import relay_redis
from .storm import reconnect_storm
from .worker_kill import worker_kill

BENCHMARKS = {
    "relay-redis": relay_redis,
    "many-streams": many_streams,
    "idle-sockets": idle_sockets,
    "reconnect-storm": reconnect_storm,
    "worker-kill": worker_kill,
    "schedules": due_schedules,
    "database": database,  # last: it reports the connections every other benchmark held
}


async def run_all(app: ProductionApp, names: list[str], smoke: bool) -> list[Result]:
    app.results = []
    for name in names:
        result = Result(name)
        started = time.perf_counter()
        result.details["loadavg_before"] = load_average()
        try:
            await BENCHMARKS[name](app, result, smoke)
        except Exception as error:  # one broken benchmark must not hide the others' figures
            result.error = f"{type(error).__name__}: {error}"
            result.details["traceback"] = traceback.format_exc()
        result.seconds = time.perf_counter() - started
        result.details["loadavg_after"] = load_average()
        print_result(result, smoke)
        if result.error:
            print(result.details["traceback"], file=sys.stderr)
        app.results.append(result)
    return app.results


def server_versions() -> dict[str, str]:
    import psycopg
    import redis

    from tests.support.production import POSTGRES_ADMIN_URL, REDIS_URL

    with psycopg.connect(POSTGRES_ADMIN_URL) as conn:
        postgres = conn.execute("SHOW server_version").fetchone()[0].split()[0]
    return {"postgres": postgres, "redis": redis.Redis.from_url(REDIS_URL).info("server")["redis_version"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.production", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="a moment each; no targets, no report")
    parser.add_argument("--only", default="", help="comma-separated benchmark names: " + ", ".join(BENCHMARKS))
    parser.add_argument("--no-report", action="store_true", help="do not rewrite docs/performance.md")
    parser.add_argument("--sockets", type=int, default=0, help="many-streams: sockets (default 200)")
    parser.add_argument("--report-from", default="", help="rewrite the report from a saved run (bench/results/*.json)")
    parser.add_argument(
        "--variant",
        default="",
        help="every Daphne process and run worker with bench-only changes (bench/variant_asgi.py), e.g. "
        "stock-redis-layer; the report is not rewritten (python -m bench.production.ab: the app and a variant in turn)",
    )
    args = parser.parse_args(argv)
    if args.report_from:
        from ..report import load

        info, results = load(ROOT / args.report_from)  # an absolute path stays itself
        complete = {r.name for r in results} == set(BENCHMARKS)
        print(f"wrote {report.write(info, results, complete=complete, order=list(BENCHMARKS))}")
        return 0
    if args.sockets:
        os.environ["BENCH_SOCKETS"] = str(args.sockets)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    missing = servers_missing()
    if missing:
        print(f"cannot run the production benchmarks: {missing}", file=sys.stderr)
        return 2

    # A run stopped with SIGTERM unwinds like Ctrl-C: its processes stop and its database is dropped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.perf_counter()
    info = {**machine(), **server_versions()}
    info["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    info["variants"] = args.variant
    print(
        f"agentweb production benchmarks{' (smoke)' if args.smoke else ''}: {info['nproc']} CPUs, {info['cpu']}, "
        f"PostgreSQL {info['postgres']}, Redis {info['redis']}, load average {info['loadavg']}",
        flush=True,
    )
    try:
        with bench_model_server() as (model_url, _), ProductionApp(model_url, variant=args.variant) as app:
            results = asyncio.run(run_all(app, names, args.smoke))
    except NoServers as reason:
        print(f"cannot run the production benchmarks: {reason}", file=sys.stderr)
        return 2
    info["loadavg_end"] = load_average()
    info["seconds"] = round(time.perf_counter() - started, 1)
    print(f"\n{len(results)} benchmark(s) in {info['seconds']} s; load average {info['loadavg_end']}", flush=True)

    from ..report import as_json

    stem = ("production-smoke" if args.smoke else "production") + (f"-{args.variant}" if args.variant else "")
    raw = ROOT / "bench" / "results" / f"{stem}.json"
    raw.parent.mkdir(exist_ok=True)
    raw.write_text(json.dumps(as_json(info, results), indent=1, default=str))
    if not args.smoke and not args.no_report and not args.variant:
        written = report.write(info, results, complete=set(names) == set(BENCHMARKS), order=list(BENCHMARKS))
        print(f"wrote {written} and {raw}")
    failed = [r.name for r in results if r.error]
    if failed:
        print(f"errors in: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
