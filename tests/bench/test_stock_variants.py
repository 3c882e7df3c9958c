"""Each variant of bench/stock_variants.py truly puts the library's own behaviour back: in a real (smoke) run the
library's code it restores runs and says so. A variant that silently did nothing would measure the app against
itself and read as "this reach-in buys nothing, drop it"."""

import os
import subprocess
import sys
from pathlib import Path

from bench.stock_variants import KNOWN
from tests.support.production import require_servers

ROOT = Path(__file__).resolve().parents[2]

#: Variants that can be on together in one process and each still leave its evidence (stock-dispatch registers no
#: taker, so no-take-now has nothing to refuse beside it; no-send-now leaves frame_of unused).
ONE_PROCESS = (
    "stock-daphne-timers",
    "stock-autobahn-io",
    "no-send-now",
    "stock-handshake",
    "stock-http-channel",
    "stock-dispatch",
    "stock-inmemory-layer",
    "stock-http-handler",
)
ONE_PROCESS_TOO = ("no-take-now", "no-shared-frame")


def evidence_of(variants: tuple[str, ...], command: list[str], tmp_path: Path) -> str:
    log = tmp_path / "evidence.log"
    env = {**os.environ, "BENCH_VARIANT_LOG": str(log)}
    result = subprocess.run(
        [sys.executable, *command, "--variant", ",".join(variants)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return log.read_text() if log.exists() else ""


def test_every_variant_is_checked_here():
    assert set(ONE_PROCESS) | set(ONE_PROCESS_TOO) | {"stock-redis-layer"} == KNOWN


def test_the_one_process_variants_run_the_librarys_code(tmp_path):
    for variants in (ONE_PROCESS, ONE_PROCESS_TOO):
        evidence = evidence_of(variants, ["-m", "bench", "--smoke", "--only", "concurrency"], tmp_path)
        for variant in variants:
            assert f"bench variant {variant}:" in evidence, (variant, evidence)


def test_the_redis_layer_variant_runs_channels_redis_in_daphne_and_the_worker(tmp_path):
    require_servers()
    command = ["-m", "bench.production", "--smoke", "--only", "relay-redis"]
    evidence = evidence_of(("stock-redis-layer",), command, tmp_path).splitlines()
    made = {line.rsplit("(pid", 1)[1] for line in evidence if "RedisChannelLayer was made" in line}
    assert len(made) >= 2, evidence  # a Daphne process and the run worker
    assert any("the log's events went out by the layer's group_send" in line for line in evidence), evidence


def test_a_server_variant_refuses_a_daphne_it_cannot_patch():
    # Under `python -m agentweb.serve` the module is __main__: patching `agentweb.serve` would change a copy nobody
    # runs, and the "variant" would measure the app unchanged.
    env = {**os.environ, "BENCH_VARIANTS": "stock-autobahn-io", "DJANGO_SETTINGS_MODULE": "agentweb.settings"}
    result = subprocess.run(
        [sys.executable, "-m", "agentweb.serve", "-p", "0", "bench.variant_asgi:application"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "python -m bench.variant_serve" in result.stderr
