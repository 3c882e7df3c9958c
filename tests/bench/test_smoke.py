"""The benchmark suite still works: `python -m bench --smoke` runs every benchmark for a fraction of a second
(no targets judged, docs/performance.md untouched) and exits 0. About 25 s on two cores."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = (
    "relay-max",
    "relay-3000",
    "first-token",
    "concurrency",
    "db-per-message",
    "thread-load",
    "stream-render",
    "tool-result-50mb",
    "mcp-call",
)


def test_bench_smoke_runs_every_benchmark():
    result = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for name in BENCHMARKS:
        assert f"== {name}" in result.stdout
