"""idle-sockets: 5,000 sockets open on one Daphne process, each subscribed to a thread of its own, no traffic:
memory per socket against a bare websocket server's (plain Daphne, an app that only accepts), CPU while idle,
and a broadcast to one thread still delivered within the coalescing window + 5 ms."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

from ..app import Client, new_id
from ..common import PYTHON, ROOT, Result, clean_env, cpu_seconds, free_port, stop, summary_ms, wait_for_port
from ..relay import WINDOW_MS, floor
from ..tokens import Spec
from .cluster import ProductionApp, rss_kib
from .loadclient import PAGE_PING_S
from .measure import spawn_client, target, watched_connections
from .relay_redis import as_bench_app

SOCKETS_PER_USER = 100
SETTLE_S = 2.0


def redis_pid() -> int | None:
    """The Redis server's process on this machine, if it is one we can read (for its CPU)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "redis-server":
                    return int(entry.name)
            except OSError:
                continue
    return None


def open_idle(targets: list[dict], subscribe: bool) -> tuple[subprocess.Popen, int, float]:
    """The idle client holding `targets` open; returns it once every socket is open, with how many and how long."""
    client = spawn_client("idle", {"sockets": targets, "subscribe": subscribe, "concurrency": 50})
    line = client.stdout.readline().split()
    if not line or line[0] != "READY":
        client.kill()
        raise RuntimeError(f"the idle client did not open its sockets: {line}")
    return client, int(line[1]), float(line[2])


def idle_cpu(pid: int, client: subprocess.Popen, quiet_s: float, smoke: bool) -> tuple[float, float]:
    """The process's CPU (% of a core) while the client's sockets send nothing, then while each sends the page's
    ping every 25 s (measured over one round of them, once every socket has started)."""
    cpu0 = cpu_seconds(pid)
    time.sleep(quiet_s)
    quiet = (cpu_seconds(pid) - cpu0) / quiet_s * 100
    client.stdin.write("pings\n")
    client.stdin.flush()
    lead_in, round_s = (0.5, 1.0) if smoke else (PAGE_PING_S, PAGE_PING_S)
    time.sleep(lead_in)
    cpu0 = cpu_seconds(pid)
    time.sleep(round_s)
    return quiet, (cpu_seconds(pid) - cpu0) / round_s * 100


def close_idle(client: subprocess.Popen) -> dict:
    import json

    out, _ = client.communicate("close\n", timeout=300)
    return json.loads(out.strip().splitlines()[-1])


def bare_server_per_socket(count: int, idle_s: float, smoke: bool) -> dict:
    """KiB per open socket of plain Daphne serving bare_asgi, and its CPU while they are open and idle."""
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "bench.production.bare_asgi:application"],
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server)
        url = f"http://127.0.0.1:{port}"
        daphne = SimpleNamespace(url=url)
        warm, _, _ = open_idle([target(daphne, "") for _ in range(20)], subscribe=False)
        close_idle(warm)
        time.sleep(SETTLE_S)
        before = rss_kib(server.pid)
        client, opened, _ = open_idle([target(daphne, "") for _ in range(count)], subscribe=False)
        time.sleep(SETTLE_S)
        after = rss_kib(server.pid)
        quiet, pinging = idle_cpu(server.pid, client, idle_s, smoke)
        close_idle(client)
        return {
            "idle_cpu_percent": quiet,
            "pinging_cpu_percent": pinging,
            "opened": opened,
            "rss_before_kib": before,
            "rss_after_kib": after,
            "kib_per_socket": (after - before) / opened,
        }
    finally:
        stop(server)


async def idle_sockets(app: ProductionApp, result: Result, smoke: bool) -> None:
    count = 50 if smoke else 5000
    idle_s = 1.0 if smoke else 30.0  # past a whole round of Daphne's pings (20 s; agentweb's 30 s)
    per_user = min(SOCKETS_PER_USER, count)
    users = app.users[: (count + per_user - 1) // per_user]
    threads = await asyncio.to_thread(app.threads_for, users, per_user)
    cookies = [cookie for _, cookie in users for _ in range(per_user)]
    with app.processes(daphnes=1, workers=1) as running, watched_connections(result, app, 2):
        daphne = running.daphnes[0]
        pid = daphne.process.pid
        targets = [target(daphne, cookie, thread=thread) for cookie, thread in zip(cookies, threads, strict=False)]
        warm, _, _ = await asyncio.to_thread(open_idle, targets[:20], True)
        await asyncio.to_thread(close_idle, warm)
        await asyncio.sleep(SETTLE_S)
        before = rss_kib(pid)
        client, opened, open_s = await asyncio.to_thread(open_idle, targets[:count], True)
        try:
            await asyncio.sleep(SETTLE_S)
            after = rss_kib(pid)
            redis = redis_pid()
            redis0, worker0, wall0 = (
                redis and cpu_seconds(redis),
                cpu_seconds(running.workers[0].process.pid),
                time.perf_counter(),
            )
            quiet_cpu, pinging_cpu = await asyncio.to_thread(idle_cpu, pid, client, idle_s, smoke)
            wall = time.perf_counter() - wall0
            redis_cpu = (cpu_seconds(redis) - redis0) / wall * 100 if redis else None
            worker_cpu = (cpu_seconds(running.workers[0].process.pid) - worker0) / wall * 100
            # The broadcast: a stream on the first idle socket's thread, read by another socket of its person.
            spec = Spec(id=new_id("idle-broadcast"), tokens=20 if smoke else 100, rate=20)
            async with Client(as_bench_app(app, daphne, cookies[0])) as reader:
                turn = await reader.turn(spec, thread=threads[0])
            _, latencies = turn.stamps()
        finally:
            held = await asyncio.to_thread(close_idle, client)
        await asyncio.sleep(12)  # Daphne gives a closing socket's consumer 10 s
        killed = daphne.log_path.read_text(errors="replace").count("took too long to shut down and was killed")
    if app.floors:
        bare = await asyncio.to_thread(bare_server_per_socket, count, idle_s, smoke)
        (floor_run,) = await asyncio.to_thread(floor, app, Spec(tokens=spec.tokens, rate=spec.rate))
    else:  # an A/B (bench/production/ab.py): the app against a variant, not against plain Daphne
        bare = dict.fromkeys(("kib_per_socket", "idle_cpu_percent", "pinging_cpu_percent"))
        floor_run = {"latency_ms": {"p99": None}}
    per_socket = (after - before) / opened
    app_ms = summary_ms(latencies)
    added = app_ms["p99"] - floor_run["latency_ms"]["p99"] if floor_run["latency_ms"]["p99"] is not None else None
    result.details.update(
        sockets=count,
        opened=opened,
        open_seconds=open_s,
        rss_before_kib=before,
        rss_after_kib=after,
        held=held,
        consumers_killed_on_close=killed,
        bare=bare,
        idle_cpu_percent=quiet_cpu,
        pinging_cpu_percent=pinging_cpu,
        redis_cpu_percent=redis_cpu,
        worker_cpu_percent=worker_cpu,
        broadcast_ms=app_ms,
        floor_run=floor_run,
    )
    result.add(
        f"memory per socket, {opened:,} sockets subscribed",
        per_socket,
        "KiB",
        target="≤ 64 KiB",
        floor=bare["kib_per_socket"],
        passed=opened == count and per_socket <= 64,
        note=f"Daphne's RSS {before / 1024:.0f} → {after / 1024:.0f} MiB; {held['failed']} failed to open, "
        f"{killed} consumers killed by Daphne when all closed at once (they then never leave their groups), "
        f"{held['still_open']} still open at the end; opened in {open_s:.1f} s; floor: plain Daphne with an "
        "app that only accepts, the same sockets",
    )
    result.add(
        "Daphne CPU while idle, no traffic",
        quiet_cpu,
        "% of a core",
        target="≤ 2 % of a core",
        floor=bare["idle_cpu_percent"],
        passed=quiet_cpu <= 2,
        note=f"over {idle_s:g} s; floor: plain Daphne holding the same sockets (its checks of every connection each "
        f"second or two, its pings each 20 s); meanwhile the worker {worker_cpu:.1f} %"
        + (f", Redis {redis_cpu:.1f} %" if redis_cpu is not None else ""),
    )
    result.add(
        "Daphne CPU while idle, each socket pinging as a tab does",
        pinging_cpu,
        "% of a core",
        floor=bare["pinging_cpu_percent"],
        note="the page's ping frame every 25 s from each socket (static/chat/socket.js), over one round of them; "
        "floor: plain Daphne sent the same frames (it does not answer them)",
    )
    result.add(
        "broadcast to one thread, token latency p99",
        app_ms["p99"],
        "ms",
        target=f"added ≤ {WINDOW_MS + 5:g} ms (window + 5)",
        floor=floor_run["latency_ms"]["p99"],
        passed=added is not None and added <= WINDOW_MS + 5,
        judged=added,
        judged_as="added",
        note=f"{spec.tokens} tokens at {spec.rate:g}/s through the worker and Redis to a socket beside the idle ones; "
        f"p50 {app_ms['p50']} ms; floor: the bare reader",
    )
