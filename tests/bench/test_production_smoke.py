"""The production benchmarks still work: `python -m bench.production --smoke` runs each of them for a moment
against PostgreSQL and Redis (no targets judged, docs/performance.md untouched) and exits 0. About 2.5 minutes on
two cores. Skips where PostgreSQL or Redis cannot be reached, fails so in CI (tests/support/production.py)."""

import subprocess
import sys
from pathlib import Path

from tests.support.production import require_servers

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = (
    "relay-redis",
    "many-streams",
    "idle-sockets",
    "reconnect-storm",
    "worker-kill",
    "schedules",
    "database",
)


def test_production_bench_smoke_runs_every_benchmark():
    require_servers()
    result = subprocess.run(
        [sys.executable, "-m", "bench.production", "--smoke"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for name in BENCHMARKS:
        assert f"== {name}" in result.stdout


def test_the_fanout_bench_delivers_every_frame_and_prints_its_figure():
    # It needs neither PostgreSQL nor Redis: nothing is sent; it would hang were a frame not delivered to a socket.
    result = subprocess.run(
        [sys.executable, "-m", "bench.production.fanout", "--sockets", "20", "--frames", "5", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "20 sockets × 5 frames, 1 rounds: CPU per frame per socket median" in result.stdout
