"""Small things every benchmark uses: processes, CPU time from /proc, percentiles, results."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# --- processes -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listened on port {port} within {timeout} s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def bench_model_server():
    """bench/model_server.py in its own process; yields (base URL without /v1, pid)."""
    process = subprocess.Popen(
        [PYTHON, "-m", "bench.model_server"], cwd=ROOT, stdout=subprocess.PIPE, text=True, env=clean_env()
    )
    try:
        line = process.stdout.readline()
        match = re.fullmatch(r"PORT (\d+)\s*", line)
        if not match:
            raise RuntimeError(f"the bench model server did not start: {line!r}")
        yield f"http://127.0.0.1:{match.group(1)}", process.pid
    finally:
        stop(process)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without the caller's app settings (AGENTWEB_*, DJANGO_*, DATABASE_URL, REDIS_URL)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTWEB_", "DJANGO_"))}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def run_json(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> Any:
    """Run `python -m ...` and parse the last stdout line as JSON."""
    result = subprocess.run(
        [PYTHON, *args], cwd=ROOT, env=env or clean_env(), capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


# --- CPU -------------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc/<pid>/stat; resolution 1/CLK_TCK s."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class CpuMeter:
    def __init__(self, pid: int):
        self.pid = pid
        self.cpu0 = cpu_seconds(pid)
        self.wait0 = runqueue_wait_s(pid)
        self.wall0 = time.perf_counter()

    def read(self) -> tuple[float, float]:
        """(CPU seconds, wall seconds) since the meter was made."""
        return cpu_seconds(self.pid) - self.cpu0, time.perf_counter() - self.wall0

    def waited(self) -> float:
        """Seconds the process waited for a CPU since the meter was made."""
        return runqueue_wait_s(self.pid) - self.wait0


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "loadavg": load_average()}


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


# --- statistics ------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0..100), nearest-rank on sorted data (no interpolation)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def median(values: list[float]) -> float | None:
    return percentile(values, 50)


def summary_ms(values_us: list[float]) -> dict[str, float | None]:
    """p50 / p90 / p99 / max of microsecond samples, in milliseconds."""

    def ms(v):
        return None if v is None else round(v / 1000, 3)

    return {
        "n": len(values_us),
        "p50": ms(percentile(values_us, 50)),
        "p90": ms(percentile(values_us, 90)),
        "p99": ms(percentile(values_us, 99)),
        "max": ms(max(values_us) if values_us else None),
    }


# --- results ---------------------------------------------------------------------------------------


@dataclass
class Figure:
    """One row of the results table."""

    benchmark: str
    figure: str
    measured: float | None
    unit: str
    target: str = ""
    floor: float | None = None
    passed: bool | None = None  # None: no target, or not judged (smoke mode)
    ratio: float | None = None
    note: str = ""
    #: The value the target is applied to when it is not `measured` itself (e.g. measured minus floor), and its name.
    judged: float | None = None
    judged_as: str = ""

    def verdict(self, smoke: bool = False) -> str:
        if smoke:
            return "smoke"
        if self.passed is None:
            return "—"
        text = "PASS" if self.passed else "FAIL"
        if self.judged is not None:
            text += f" ({self.judged_as} {fmt(self.judged, self.unit)})"
        return text

    def __post_init__(self):
        if self.ratio is None and self.measured is not None and self.floor:
            self.ratio = self.measured / self.floor


@dataclass
class Result:
    name: str
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    def add(self, *args, **kwargs) -> Figure:
        figure = Figure(self.name, *args, **kwargs)
        self.figures.append(figure)
        return figure


def fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif float(value).is_integer() or abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}".rstrip("0").rstrip(".") if value else "0"
    return f"{text} {unit}".strip() if unit else text


def print_result(result: Result, smoke: bool) -> None:
    print(f"\n== {result.name} ({result.seconds:.1f} s)", flush=True)
    if result.error:
        print(f"   ERROR: {result.error}", flush=True)
    for f in result.figures:
        verdict = f.verdict(smoke)
        ratio = f"{f.ratio:.2f}×" if f.ratio is not None else "—"
        print(
            f"   {f.figure:<44} {fmt(f.measured, f.unit):>16}   floor {fmt(f.floor, f.unit):>14}   "
            f"ratio {ratio:>8}   target {f.target or '—':<22} {verdict}",
            flush=True,
        )


def runqueue_wait_s(pid: int) -> float:
    """Seconds the process's threads spent runnable but waiting for a CPU (/proc/<pid>/task/*/schedstat):
    how much the machine's other load held this process back."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[1])
            except (OSError, IndexError, ValueError):
                continue
    except OSError:
        return 0.0
    return total / 1e9


def pin(pid: int, cpus: set[int]) -> None:
    """Every thread of process `pid` onto `cpus` (threads it starts later inherit it from their creator)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(task.name), cpus)


@contextlib.contextmanager
def server_apart(server_pid: int, load_pids: list[int]):
    """The server under test on the first CPU, and what loads and measures it (this process, the model server, and
    any process they start meanwhile) on the others: the load generators' own CPU use then never queues the server
    behind them, and the server never lands on a CPU they keep busy. Everything back on every CPU afterwards.
    Does nothing on a machine with one CPU."""
    every = os.sched_getaffinity(0)
    if len(every) < 2:
        yield None
        return
    server_cpu = min(every)
    pin(server_pid, {server_cpu})
    for pid in [os.getpid(), *load_pids]:
        pin(pid, every - {server_cpu})
    try:
        yield server_cpu
    finally:
        for pid in [server_pid, os.getpid(), *load_pids]:
            with contextlib.suppress(FileNotFoundError):
                pin(pid, every)


@contextlib.contextmanager
def collector_paused():
    """No cyclic garbage collection in this (the measuring) process meanwhile: a full collection here walks every
    frame received so far (a dict each, tens of thousands) and for that long receives nothing, which would be
    counted as the app's latency."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
