"""What data growth costs (issue 42): `python -m bench.data` generates a team's data at 1k, 10k, 100k messages (and
1M with `--sizes 1k,10k,100k,1M`) into fresh PostgreSQL and SQLite databases, measures what a person does at each
size (bench/data/measure.py, one process per size and database), saves the run in bench/results/, draws a chart
per figure (docs/performance/data-*.svg) and rewrites docs/performance.md's "Data growth (issue 42)" section.

`--smoke`: 1k messages only, a few repeats, on both databases, nothing written (CI: does it still work?).
PostgreSQL must be reachable (AGENTWEB_TEST_POSTGRES_URL; loopback default, as in CI).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from ..common import ROOT, load_average, machine

SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1M": 1_000_000}


@contextmanager
def sqlite_database(folder: Path):
    yield f"sqlite:///{folder / 'bench-data.sqlite3'}"


@contextmanager
def database(vendor: str, folder: Path):
    if vendor == "sqlite":
        with sqlite_database(folder) as url:
            yield url
    else:
        from tests.support.production import postgres_database

        with postgres_database() as url:
            yield url


def run_one(vendor: str, messages: int, repeat: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-data-") as folder, database(vendor, Path(folder)) as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTWEB_", "DJANGO_"))}
        env.update(
            DATABASE_URL=url,
            DJANGO_SETTINGS_MODULE="agentweb.settings",
            AGENTWEB_MEDIA_ROOT=str(Path(folder) / "media"),
            AGENTWEB_VAPID_KEY_FILE=str(Path(folder) / "vapid_key"),
            AGENTWEB_TEST_LOG_DIR=folder,
            # Turns follow each other as fast as they end: the person's send limit would refuse them.
            AGENTWEB_SEND_BURST="1000000",
            AGENTWEB_SEND_RATE_PER_MINUTE="1000000",
        )
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "bench.data.measure", "--messages", str(messages), "--repeat", str(repeat)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=4 * 3600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{vendor} at {messages}: exit {done.returncode}\n{done.stderr[-4000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result["wall_s"] = round(time.perf_counter() - started, 1)
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.data", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="1k messages, few repeats, nothing written")
    parser.add_argument("--sizes", default="1k,10k,100k", help="of " + ", ".join(SIZES))
    parser.add_argument("--vendors", default="postgresql,sqlite")
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--no-report", action="store_true", help="do not rewrite docs/performance.md")
    parser.add_argument("--report-from", default="", help="rewrite the report from a saved run (bench/results/*.json)")
    args = parser.parse_args(argv)

    from . import report

    if args.report_from:
        report.write(json.loads(Path(args.report_from).read_text()))
        return 0
    sizes = ["1k"] if args.smoke else [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown sizes {unknown}: {', '.join(SIZES)}")
    repeat = 3 if args.smoke else args.repeat
    vendors = [v.strip() for v in args.vendors.split(",") if v.strip()]
    if "postgresql" in vendors:
        from tests.support.production import POSTGRES_ADMIN_URL, reachable

        if not reachable(POSTGRES_ADMIN_URL, 5432):
            print("PostgreSQL is not reachable (AGENTWEB_TEST_POSTGRES_URL)", file=sys.stderr)
            return 2
    run = {"at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(), "results": []}
    results = ROOT / "bench" / "results"
    saved = results / f"data-{run['at'].replace(':', '')}.json"
    failed = False
    for size in sizes:
        for vendor in vendors:
            load = load_average()
            print(f"{vendor} {size}: generating and measuring (load {load})", file=sys.stderr, flush=True)
            try:
                result = run_one(vendor, SIZES[size], repeat)
            except Exception as error:
                print(f"  failed: {error}", file=sys.stderr)
                failed = True
                continue
            result.update(label=size, loadavg_before=load, loadavg_after=load_average())
            failed = failed or "chromium_failed" in result
            run["results"].append(result)
            print(report.one_line(result), file=sys.stderr, flush=True)
            if not args.smoke:  # after each size: a run stopped before its largest keeps what it measured
                results.mkdir(exist_ok=True)
                saved.write_text(json.dumps(run, indent=1))
    if args.smoke:
        return 1 if failed else 0
    print(f"saved {saved.relative_to(ROOT)}", file=sys.stderr)
    if not args.no_report:
        report.write(run)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
