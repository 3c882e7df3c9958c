"""reconnect-storm: 1,000 sockets following streams (2 Daphne processes, 1 worker) drop their connection in the
middle of the streams and come back within 5 s with their last `seq`; every one must get exactly the events it
missed (none lost, none twice), quickly, while the streams' own sockets (which stay) are not held up."""

from __future__ import annotations

import asyncio

from ..app import new_id
from ..common import Result, fmt, percentile, summary_ms
from ..tokens import Spec
from .cluster import ProductionApp
from .measure import CpuMeters, run_clients, target, watched_connections

CLIENT_PROCESSES = 2
#: A stream whose sockets stay is "not stalled" if no pause between its frames during the storm exceeds this.
STALL_MS = 500


async def reconnect_storm(app: ProductionApp, result: Result, smoke: bool) -> None:
    streams, droppers = (2, 5) if smoke else (50, 20)
    rate = 20 if smoke else 10
    seconds = 2 if smoke else 20
    drop_after, within = (0.5, 0.5) if smoke else (5.0, 5.0)
    users = app.users[:streams]
    threads = await asyncio.to_thread(app.threads_for, users)
    with app.processes(daphnes=2, workers=1) as running, watched_connections(result, app, 3):
        daphnes = running.daphnes
        plan = [
            {
                "thread": thread,
                "message": Spec(id=new_id("storm"), tokens=rate * seconds, rate=rate).message(),
                "steady": target(daphnes[n % 2], cookie),
                "droppers": [target(daphnes[(n + k) % 2], cookie) for k in range(droppers)],
            }
            for n, ((_, cookie), thread) in enumerate(zip(users, threads, strict=True))
        ]
        jobs = [
            {
                "threads": plan[k::CLIENT_PROCESSES],
                "drop_after": drop_after,
                "reconnect_within": within,
                "timeout": seconds * 3 + 60,  # a follower that never hears its run end gives up then
            }
            for k in range(CLIENT_PROCESSES)
        ]
        meters = CpuMeters({name: pid for name, pid in running.pids().items() if name.startswith("daphne")})
        outputs = await asyncio.to_thread(run_clients, "storm", jobs)
        daphne_cpu, _ = meters.read()
        not_fitting = [
            line
            for process in [*running.workers, *daphnes]
            for line in process.log_path.read_text(errors="replace").splitlines()
            if "did not fit" in line
        ]
    dropped = [d for out in outputs for d in out["droppers"]]
    steady = [s for out in outputs for s in out["steady"]]
    tokens = rate * seconds
    exact = sum(1 for d in dropped if d["exact"] and d["completed"] and d["tokens"] == tokens)
    lost = sum(d["gaps"] + (tokens - d["tokens"]) for d in dropped)
    twice = sum(d["duplicates"] + d["token_duplicates"] for d in dropped)
    by_snapshot = sum(1 for d in dropped if d["by_snapshot"])
    resumes = [d["resume_s"] * 1000 for d in dropped if d["resume_s"] is not None]
    refused = sum(d["failed_attempts"] for d in dropped)
    connects = [d["connect_s"] * 1000 for d in dropped if d["connect_s"] is not None]
    resume99 = percentile(resumes, 99)
    frames = sum(d["events"] for d in [*dropped, *steady])
    gap_during = max((s["gap_during_ms"] for s in steady), default=None)
    gap_before = max((s["gap_before_ms"] for s in steady), default=None)
    steady_ms = summary_ms([v for s in steady for v in s.pop("latency_us")])
    result.details.update(
        streams=streams,
        droppers=len(dropped),
        rate=rate,
        seconds=seconds,
        dropped=dropped,
        steady=steady,
        steady_latency_ms=steady_ms,
        sends_not_fitting=len(not_fitting),
        daphne_cpu_s=daphne_cpu,
        frames=frames,
        not_fitting_sample=not_fitting[:5],
    )
    result.add(
        f"sockets resumed exactly, of {len(dropped):,} dropped",
        exact,
        "",
        target=f"all {len(dropped):,}: 0 lost, 0 twice",
        passed=exact == len(dropped) and lost == 0 and twice == 0,
        note=f"{lost} events or tokens missing, {twice} twice; {by_snapshot} resumed from a snapshot instead of the "
        f"log's tail; {streams} streams × {rate} tokens/s, dropped after {drop_after:g} s, back within {within:g} s",
    )
    result.add(
        "time to resume p99",
        resume99,
        "ms",
        target="≤ 1,000 ms",
        passed=resume99 is not None and resume99 <= 1000 and len(resumes) == len(dropped),
        note=f"the first handshake tried → the first event after thread.subscribe with after_seq; p50 "
        f"{fmt(percentile(resumes, 50), 'ms')}, max {fmt(max(resumes) if resumes else None, 'ms')}; "
        f"{len(dropped) - len(resumes)} never resumed; {refused} handshakes refused or broken and tried again (as the "
        f"page does); the handshakes alone p99 {fmt(percentile(connects, 99), 'ms')}",
    )
    daphne_s = sum(used for used in daphne_cpu.values() if used is not None)
    result.add(
        "CPU per frame sent, the Daphne processes",
        daphne_s * 1e6 / frames if frames else None,
        "µs",
        note=f"{frames:,} frames to the {len(dropped) + len(steady):,} sockets; {daphne_s:.1f} s of CPU in all "
        "(handshakes and subscribes included)",
    )
    result.add(
        "longest pause of a stream that stayed, during the storm",
        gap_during,
        "ms",
        target=f"≤ {STALL_MS} ms",
        floor=gap_before,
        passed=gap_during is not None and gap_during <= STALL_MS and all(s["completed"] for s in steady),
        note=f"the {streams} sockets that sent the turns and stayed; floor: their longest pause before the storm; "
        f"their token latency p99 {fmt(steady_ms['p99'], 'ms')}",
    )
