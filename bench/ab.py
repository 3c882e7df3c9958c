"""The app against a variant (bench/variant_asgi.py) in one run, in interleaved pairs (app, variant, variant, app,
…) so that a shared machine's drift weighs on both alike: `python -m bench.ab --variant stock-dispatch --only
concurrency,relay-max [--pairs 1]`.

Two Daphne processes serve two copies of one database (the same users and sessions): the app as it is, and the
app with the variant; each benchmark named runs against one, then the other, in turn (bench/production/ab.py does
the same with the production benchmarks). What it prints, per figure: each side's values in the order they ran,
their medians, the variant's difference from the app, and each side's spread (its largest value less its smallest,
over its median). The variant's evidence (bench/stock_variants.py: the library's own code ran) is printed too, and
a variant that leaves none fails the run: measured as it is, it would read as "buys nothing".
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

from .common import ROOT, Result, bench_model_server, fmt, load_average

#: The label of the app's side.
APP = "app"


def interleaved(variant: str, pairs: int) -> list[str]:
    """`pairs` pairs in the order app, variant, variant, app, app, variant, …"""
    sides = []
    for n in range(pairs):
        sides += [APP, variant] if n % 2 == 0 else [variant, APP]
    return sides


def summarise(runs: list[tuple[str, Result]], variant: str) -> list[dict]:
    """Per (benchmark, figure): each side's values in the order they ran, their medians and spreads, and the
    variant's difference from the app (its median over the app's, less one)."""
    rows: dict[tuple[str, str], dict] = {}
    for side, result in runs:
        for figure in result.figures:
            row = rows.setdefault(
                (figure.benchmark, figure.figure),
                {"benchmark": figure.benchmark, "figure": figure.figure, "unit": figure.unit, APP: [], variant: []},
            )
            row[side].append(figure.measured)
            before, after = (result.details.get(f"loadavg_{when}", "?").split()[0] for when in ("before", "after"))
            row.setdefault("load", {APP: [], variant: []})[side].append(f"{before}→{after}")
    out = []
    for row in rows.values():
        for side in (APP, variant):
            values = [v for v in row[side] if v is not None]
            mid = statistics.median(values) if values else None  # of two runs: their mean
            row[f"{side}_median"] = mid
            row[f"{side}_spread"] = (max(values) - min(values)) / abs(mid) if values and mid else None
        a, b = row[f"{APP}_median"], row[f"{variant}_median"]
        row["difference"] = (b - a) / abs(a) if a and b is not None else None
        out.append(row)
    return out


def print_summary(rows: list[dict], variant: str) -> None:
    print(f"\n== {APP} against {variant}: values in the order they ran; difference = {variant}'s median ÷ app's − 1")
    for row in rows:

        def values(side: str, row=row) -> str:
            return ", ".join(fmt(v, row["unit"]) for v in row[side])

        def pct(value: float | None) -> str:
            return "—" if value is None else f"{value * 100:+.1f} %"

        spread = [row[f"{s}_spread"] for s in (APP, variant) if row[f"{s}_spread"] is not None]
        print(
            f"   {row['benchmark']}: {row['figure']}\n"
            f"      {APP}: {values(APP)} (median {fmt(row[f'{APP}_median'], row['unit'])}); "
            f"{variant}: {values(variant)} (median {fmt(row[f'{variant}_median'], row['unit'])}); "
            f"difference {pct(row['difference'])}; spread {' / '.join(pct(s).lstrip('+') for s in spread) or '—'}; "
            f"load {', '.join(row['load'][APP])} / {', '.join(row['load'][variant])}",
            flush=True,
        )


def report_evidence(path: Path, variant: str) -> bool:
    """Print the variant's evidence (each note with the number of processes that made it); False when a variant of
    bench/stock_variants.py left none (it did not take effect)."""
    import re
    from collections import Counter

    from .stock_variants import KNOWN

    lines = path.read_text().splitlines() if path.exists() else []
    notes = Counter(re.sub(r" \(pid \d+\)$", "", line) for line in lines)
    print(f"\nevidence of {variant}:")
    for note, processes in sorted(notes.items()):
        print(f"   {note} (in {processes} process{'es' if processes > 1 else ''})")
    missing = [
        name
        for name in variant.split(",")
        if name in KNOWN and not any(note.startswith(f"bench variant {name}:") for note in notes)
    ]
    if missing:
        print(f"NO EVIDENCE for {', '.join(missing)}: the variant did not take effect; its figures mean nothing")
        return False
    return True


def save(name: str, variant: str, runs: list[tuple[str, Result]], rows: list[dict], info: dict) -> Path:
    from .report import as_json

    path = Path(os.environ.get("BENCH_OUT_ROOT", ROOT)) / "bench" / "results" / f"{name}-{variant}.json"
    path.parent.mkdir(exist_ok=True)
    data = {
        "info": info,
        "variant": variant,
        "summary": rows,
        "runs": [{"side": side, **as_json({}, [result])["results"][0]} for side, result in runs],
    }
    path.write_text(json.dumps(data, indent=1, default=str))
    return path


async def measure(apps: dict[str, object], sides: list[str], names: list[str], smoke: bool) -> list:
    from .__main__ import run_all

    runs = []
    for number, side in enumerate(sides, 1):
        print(f"\n##### {side} ({number} of {len(sides)}), load average {load_average()}", flush=True)
        for result in await run_all(apps[side], names, smoke):
            runs.append((side, result))
    return runs


def parse_arguments(argv, description: str, benchmarks, *, default_only: str) -> tuple[argparse.Namespace, list[str]]:
    """An A/B's options (this one's and the production shape's, bench/production/ab.py) and its benchmarks' names."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--only", default=default_only, help=", ".join(benchmarks))
    parser.add_argument("--pairs", type=int, default=2, help="pairs of runs: app, variant, variant, app, …")
    parser.add_argument("--smoke", action="store_true", help="each benchmark for a moment (does the A/B work?)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in benchmarks]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    return args, names


def main(argv: list[str] | None = None) -> int:
    from .__main__ import BENCHMARKS

    args, names = parse_arguments(argv, __doc__, BENCHMARKS, default_only="relay-max,concurrency")

    from .app import BenchApp, Daphne

    info = {"loadavg": load_average(), "only": names, "pairs": args.pairs}
    with bench_model_server() as (model_url, model_pid), BenchApp(model_url) as app:
        app.model_pid = model_pid
        evidence = app.tmp / "evidence.log"
        db = app.tmp / "variant.sqlite3"
        for suffix in ("", "-wal", "-shm"):  # the database as SQLite sees it, write-ahead log included
            source = app.db_path.with_name(app.db_path.name + suffix)
            if source.exists():
                shutil.copy(source, db.with_name(db.name + suffix))
        other = copy.copy(app)
        # The same secret key: the sessions in the copy are signed with it.
        other.env = {**app.env, "DATABASE_URL": f"sqlite:///{db}", "BENCH_VARIANT_LOG": str(evidence)}
        other.daphne = Daphne(other.env, app.tmp / "variant.log", args.variant).start()
        try:
            sides = interleaved(args.variant, args.pairs)
            runs = asyncio.run(measure({APP: app, args.variant: other}, sides, names, args.smoke))
        finally:
            other.daphne.stop()
        took_effect = report_evidence(evidence, args.variant)
    info["loadavg_end"] = load_average()
    rows = summarise(runs, args.variant)
    print_summary(rows, args.variant)
    print(f"\nwrote {save('ab', args.variant, runs, rows, info)}")
    failed = [f"{side}: {result.name}" for side, result in runs if result.error]
    if failed:
        print(f"errors in: {', '.join(failed)}", file=sys.stderr)
    return 0 if took_effect and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
