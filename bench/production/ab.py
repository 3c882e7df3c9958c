"""The production benchmarks, the app against a variant (bench/variant_asgi.py) in one run, in interleaved pairs
(app, variant, variant, app, …): `python -m bench.production.ab --variant stock-redis-layer --only
many-streams,reconnect-storm [--pairs 1]`.

One PostgreSQL database, users and model server for the whole run; each benchmark starts its Daphne processes and
run workers as it always does, serving the app as it is or, in turn, with the variant (`python -m
bench.variant_serve` and `python -m bench.variant_worker`). The floors (bare readers, plain Daphne, the in-memory
relay) are not measured: the app's own figures are the floor of the comparison. Printed as bench/ab.py prints it,
the variant's evidence included (none fails the run)."""

from __future__ import annotations

import asyncio
import signal
import sys

from ..ab import APP, interleaved, parse_arguments, print_summary, report_evidence, save, summarise
from ..common import bench_model_server, load_average
from .cluster import NoServers, ProductionApp, servers_missing


async def measure(app: ProductionApp, variant: str, sides: list[str], names: list[str], smoke: bool) -> list:
    from .__main__ import run_all

    runs = []
    for number, side in enumerate(sides, 1):
        app.variant = "" if side == APP else variant
        print(f"\n##### {side} ({number} of {len(sides)}), load average {load_average()}", flush=True)
        for result in await run_all(app, names, smoke):
            runs.append((side, result))
    return runs


def main(argv: list[str] | None = None) -> int:
    from .__main__ import BENCHMARKS

    args, names = parse_arguments(argv, __doc__, BENCHMARKS, default_only="many-streams,reconnect-storm")
    missing = servers_missing()
    if missing:
        print(f"cannot run the production benchmarks: {missing}", file=sys.stderr)
        return 2
    # A run stopped with SIGTERM unwinds like Ctrl-C: its processes stop and its database is dropped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    info = {"loadavg": load_average(), "only": names, "pairs": args.pairs}
    try:
        with bench_model_server() as (model_url, _), ProductionApp(model_url) as app:
            app.floors = False
            evidence = app.tmp / "evidence.log"
            app.env["BENCH_VARIANT_LOG"] = str(evidence)
            sides = interleaved(args.variant, args.pairs)
            runs = asyncio.run(measure(app, args.variant, sides, names, args.smoke))
            took_effect = report_evidence(evidence, args.variant)
    except NoServers as reason:
        print(f"cannot run the production benchmarks: {reason}", file=sys.stderr)
        return 2
    info["loadavg_end"] = load_average()
    rows = summarise(runs, args.variant)
    print_summary(rows, args.variant)
    print(f"\nwrote {save('production-ab', args.variant, runs, rows, info)}")
    failed = [f"{side}: {result.name}" for side, result in runs if result.error]
    if failed:
        print(f"errors in: {', '.join(failed)}", file=sys.stderr)
    return 0 if took_effect and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
