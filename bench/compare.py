"""Compare result files side by side, e.g. the app against a --variant:

    python -m bench.compare bench/results/latest.json bench/results/latest-no-dispatch-hop.json

Prints every figure of each file in columns, then the CPU per token and run-queue waits the figures rest on.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import fmt


def cpu_lines(data: dict) -> dict[str, str]:
    out = {}
    for result in data["results"]:
        details = result.get("details", {})
        if result["name"] == "relay-3000" and "run" in details:
            run = details["run"]
            out["relay-3000 Daphne CPU/token"] = f"{run['cpu_us_per_token']:.0f} µs ({run['delta_frames']} frames)"
            out["relay-3000 Daphne CPU/frame"] = f"{run['cpu_s'] * 1e6 / run['delta_frames']:.0f} µs"
        if result["name"] == "relay-max" and details.get("runs"):
            best = min(r["cpu_us_per_token"] for r in details["runs"])
            out["relay-max Daphne CPU/token"] = f"{best:.0f} µs"
        if result["name"] == "concurrency" and "cpu_s" in details:
            tokens = details["streams"] * details["rate"] * details["seconds"]
            out["concurrency Daphne CPU/token"] = f"{details['cpu_s'] * 1e6 / tokens:.0f} µs"
            if details.get("delta_frames"):
                out["concurrency Daphne CPU/frame"] = (
                    f"{details['cpu_s'] * 1e6 / details['delta_frames']:.0f} µs ({details['delta_frames']} frames)"
                )
        if "runqueue_wait_s" in details:
            out[f"{result['name']} Daphne run-queue wait"] = f"{details['runqueue_wait_s']:.1f} s"
        if "run" in details and "runqueue_wait_s" in details["run"]:
            out[f"{result['name']} Daphne run-queue wait"] = f"{details['run']['runqueue_wait_s']:.1f} s"
    return out


def main(paths: list[str]) -> None:
    files = [(Path(p).stem, json.loads(Path(p).read_text())) for p in paths]
    rows: dict[str, list[str]] = {}
    for index, (_, data) in enumerate(files):
        for result in data["results"]:
            for figure in result["figures"]:
                key = f"{figure['benchmark']}: {figure['figure']}"
                cell = fmt(figure["measured"], figure["unit"])
                if figure.get("judged") is not None:
                    cell += f" ({figure['judged_as']} {fmt(figure['judged'], figure['unit'])})"
                rows.setdefault(key, [""] * len(files))[index] = cell
        for key, cell in cpu_lines(data).items():
            rows.setdefault(key, [""] * len(files))[index] = cell
        rows.setdefault("load average", [""] * len(files))[index] = data["machine"].get("loadavg", "")
    width = max(len(k) for k in rows)
    print(" " * width + " | " + " | ".join(name[:28].ljust(28) for name, _ in files))
    for key, cells in rows.items():
        print(key.ljust(width) + " | " + " | ".join(c[:28].ljust(28) for c in cells))


if __name__ == "__main__":
    main(sys.argv[1:])
