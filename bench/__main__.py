"""Run the benchmarks: `python -m bench` (all, then rewrite docs/performance.md), `python -m bench --smoke`
(each for a fraction of a second, nothing asserted or written), `--only relay-max,first-token`."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

from . import api_relay, browser, concurrency, db_count, first_token, mcp_call, relay, report, tool_result
from .app import BenchApp
from .common import ROOT, Result, bench_model_server, load_average, machine, print_result

BENCHMARKS = {
    "relay-max": relay.relay_max,
    "relay-3000": relay.relay_3000,
    "first-token": first_token.first_token,
    "concurrency": concurrency.concurrency,
    "db-per-message": db_count.db_per_message,
    "thread-load": browser.thread_load,
    "stream-render": browser.stream_render,
    "tool-result-50mb": tool_result.tool_result,
    "mcp-call": mcp_call.mcp_call,
    "api-relay": api_relay.api_relay,
}


async def run_all(app: BenchApp, names: list[str], smoke: bool) -> list[Result]:
    results = []
    for name in names:
        result = Result(name)
        started = time.perf_counter()
        result.details["loadavg_before"] = load_average()
        try:
            await BENCHMARKS[name](app, result, smoke)
        except browser.NoBrowser as reason:
            result.details["skipped"] = str(reason)
            print(f"   SKIPPED: {reason}")
        except Exception as error:  # one broken benchmark must not hide the others' figures
            result.error = f"{type(error).__name__}: {error}"
            result.details["traceback"] = traceback.format_exc()
            tail = app.daphne_log_tail()
            if tail:
                result.details["daphne_log"] = tail
        result.seconds = time.perf_counter() - started
        result.details["loadavg_after"] = load_average()
        print_result(result, smoke)
        if result.error and smoke:
            print(result.details.get("traceback", ""), file=sys.stderr)
        results.append(result)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="a fraction of a second each; no targets, no report")
    parser.add_argument("--only", default="", help="comma-separated benchmark names: " + ", ".join(BENCHMARKS))
    parser.add_argument("--no-report", action="store_true", help="do not rewrite docs/performance.md")
    parser.add_argument("--debug", action="store_true", help="run the app with DJANGO_DEBUG=true (default false)")
    parser.add_argument(
        "--ref",
        default="",
        help="measure the app as committed at this git ref (exported with git archive), not the working tree",
    )
    parser.add_argument(
        "--variant",
        default="",
        help="serve the app with bench-only changes (bench/variant_asgi.py): no-dispatch-hop, persistent-db, "
        "profile; the report is not rewritten",
    )
    parser.add_argument("--streams", type=int, default=0, help="concurrency: streams (default 50)")
    parser.add_argument(
        "--report-from", default="", help="rewrite docs/performance.md from a saved run (bench/results/*.json)"
    )
    parser.add_argument(
        "--snapshot",
        action="store_true",
        help="copy the working tree (tracked and untracked files) first and measure the copy, so that edits "
        "made while the benchmarks run do not change what is measured",
    )
    parser.add_argument("--out-root", default="", help=argparse.SUPPRESS)  # where results go (set by the above)
    args = parser.parse_args(argv)
    if args.report_from:
        info, results = report.load(Path(args.report_from))
        print(f"wrote {report.write(info, results, complete={r.name for r in results} == set(BENCHMARKS))}")
        return 0
    if args.ref or args.snapshot:
        passed = list(argv if argv is not None else sys.argv[1:])
        inner = [a for a in passed if a not in ("--snapshot", "--ref", args.ref) and not a.startswith("--ref=")]
        return run_elsewhere(args.ref, inner)
    out_root = Path(args.out_root) if args.out_root else ROOT
    if args.streams:
        os.environ["BENCH_STREAMS"] = str(args.streams)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")

    started = time.perf_counter()
    info = machine()
    info["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    info["debug"] = args.debug
    info["variants"] = args.variant
    print(
        f"agentweb benchmarks{' (smoke)' if args.smoke else ''}: {info['nproc']} CPUs, {info['cpu']}, "
        f"load average {info['loadavg']}",
        flush=True,
    )
    with (
        bench_model_server() as (model_url, model_pid),
        BenchApp(model_url, debug=args.debug, variants=args.variant) as app,
    ):
        app.model_pid = model_pid
        results = asyncio.run(run_all(app, names, args.smoke))
    info["loadavg_end"] = load_average()
    info["seconds"] = round(time.perf_counter() - started, 1)
    print(f"\n{len(results)} benchmark(s) in {info['seconds']} s; load average {info['loadavg_end']}", flush=True)

    info["ref"] = os.environ.get("BENCH_REF", "")
    stem = "smoke" if args.smoke else "latest"
    if args.variant:
        stem += "-" + args.variant.replace(",", "+")
    raw = out_root / "bench" / "results" / f"{stem}.json"
    raw.parent.mkdir(exist_ok=True)
    raw.write_text(json.dumps(report.as_json(info, results), indent=1, default=str))
    if not args.smoke and not args.no_report and not args.variant:
        path = report.write(info, results, complete=set(names) == set(BENCHMARKS), doc=out_root / report.DOC_PATH)
        print(f"wrote {path} and {raw}")
    failed = [r.name for r in results if r.error]
    if failed:
        print(f"errors in: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def run_elsewhere(ref: str, argv: list[str]) -> int:
    """Copy the app to a temporary directory (as committed at `ref`, or the working tree as it is now when
    `ref` is empty), put this bench/ in it, and run the benchmarks there: edits other people make while the
    benchmarks run cannot break or skew the run."""
    tree = Path(tempfile.mkdtemp(prefix="agentweb-bench-tree-"))
    try:
        if ref:
            commit = subprocess.run(
                ["git", "rev-parse", "--verify", f"{ref}^{{commit}}"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
            label = f"{ref} ({commit[:10]}, the committed tree; uncommitted edits not measured)"
        else:
            listed = subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=ROOT,
                capture_output=True,
                check=True,
            ).stdout.split(b"\0")
            for name in filter(None, (n.decode() for n in listed)):
                source = ROOT / name
                if source.is_file():
                    (tree / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, tree / name)
            head = subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
            ).stdout.strip()
            label = f"working tree at {datetime.now(UTC):%H:%M UTC} (on {head}, uncommitted edits included)"
        shutil.rmtree(tree / "bench", ignore_errors=True)
        shutil.copytree(ROOT / "bench", tree / "bench", ignore=shutil.ignore_patterns("results", "__pycache__"))
        print(f"measuring {label}, copied to {tree}", flush=True)
        env = {**os.environ, "BENCH_REF": label, "BENCH_OUT_ROOT": str(ROOT)}
        return subprocess.run(
            [sys.executable, "-m", "bench", *argv, "--out-root", str(ROOT)], cwd=tree, env=env
        ).returncode
    finally:
        shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
