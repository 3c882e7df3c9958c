"""The production benchmarks' websocket clients, each in a process of its own so that the measuring side is not
the bottleneck (nor shares the bench process's loop): `python -m bench.production.loadclient MODE` reads a JSON
job on stdin and prints one JSON line. Modes:

- `streams`: each socket sends one turn on its thread and reads it to its end; stamps, losses, latencies.
- `idle`: open every socket and subscribe it to its thread; print `READY` and hold them, without traffic, until
  a line arrives on stdin; then close them.
- `storm`: sockets follow streams; the droppers drop their connection mid-stream and come back within a few
  seconds with their last `seq`; exactly the events they missed, and how long resuming took.
- `cycles`: connect and disconnect, over and over.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import sys
import time
import uuid

from websockets.asyncio.client import connect

from ..tokens import decode

TERMINAL = {"run.completed", "run.failed", "run.cancelled"}
#: Handshakes a dropped socket tries before it gives up (pauses 0.5, 1, 2, 4, 4 … s).
RECONNECT_ATTEMPTS = 10


async def open_socket(target: dict, timeout: float = 120):
    return await connect(
        target["url"],
        additional_headers={"Cookie": target["cookie"]},
        origin=target["origin"],
        max_size=None,
        open_timeout=timeout,
        ping_interval=None,  # the server pings; the client answers, as a browser does
        compression=None,
    )


def send_frame(thread: str, content: str) -> str:
    return json.dumps(
        {"type": "message.send", "thread": thread, "content": content, "client_msg_id": str(uuid.uuid4())}
    )


def subscribe_frame(thread: str, after_seq: int | None) -> str:
    return json.dumps({"type": "thread.subscribe", "thread": thread, "after_seq": after_seq})


# --- streams -------------------------------------------------------------------------------------


async def one_stream(target: dict, start_at: float) -> dict:
    ws = await open_socket(target)
    try:
        await asyncio.sleep(max(0.0, start_at - time.time()))
        sent_ns = time.time_ns()
        await ws.send(send_frame(target["thread"], target["message"]))
        seqs, latencies, delta_ns = [], [], []
        async with asyncio.timeout(target.get("timeout", 600)):
            while True:
                raw = await ws.recv()
                now = time.time_ns()
                event = json.loads(raw)
                kind = event.get("type")
                if kind == "message.delta":
                    delta_ns.append(now)
                    for seq, latency in decode(event["text"], now // 1000):
                        seqs.append(seq)
                        latencies.append(latency)
                elif kind in TERMINAL:
                    ended = event
                    break
                elif kind == "error":
                    return {"error": event}
        return {
            "status": kind,
            # Why a run failed (run.failed's error), for the report's list of streams that did not complete.
            **({"reason": ended["error"]} if ended.get("error") else {}),
            "tokens": len(set(seqs)),
            "duplicates": len(seqs) - len(set(seqs)),
            "in_order": seqs == sorted(seqs),
            "latency_us": latencies,
            "frames": len(delta_ns),
            "sent_ns": sent_ns,
            "first_ns": delta_ns[0] if delta_ns else None,
            "last_ns": delta_ns[-1] if delta_ns else None,
        }
    finally:
        await ws.close()


async def streams(job: dict) -> dict:
    start_at = time.time() + job.get("start_in", 3.0)
    results = await asyncio.gather(*(one_stream(t, start_at) for t in job["sockets"]), return_exceptions=True)
    return {"streams": [r if isinstance(r, dict) else {"error": repr(r)} for r in results]}


# --- idle ----------------------------------------------------------------------------------------

#: The page's keep-alive frame, byte for byte, and how often each tab sends it (static/chat/socket.js).
PAGE_PING = '{"type":"ping"}'
PAGE_PING_S = 25


async def idle(job: dict) -> dict:
    gate = asyncio.Semaphore(job.get("concurrency", 50))
    sockets, failures = [], []
    received = [0]

    async def open_one(target: dict) -> None:
        async with gate:
            try:
                ws = await open_socket(target)
                if job.get("subscribe", True):
                    await ws.send(subscribe_frame(target["thread"], None))
                    while json.loads(await ws.recv()).get("type") != "thread.snapshot":
                        pass
                sockets.append(ws)
            except Exception as error:  # counted, reported
                failures.append(repr(error))

    started = time.perf_counter()
    await asyncio.gather(*(open_one(t) for t in job["sockets"]))
    opened_s = time.perf_counter() - started

    async def drain(ws) -> None:
        try:
            async for _ in ws:
                received[0] += 1
        except Exception:
            pass

    async def keep_alive(ws) -> None:
        # As each open tab does (static/chat/socket.js): a ping frame every 25 s, tabs opened at different times.
        try:
            await asyncio.sleep(random.uniform(0, PAGE_PING_S))
            while True:
                await ws.send(PAGE_PING)
                await asyncio.sleep(PAGE_PING_S)
        except Exception:
            pass

    readers = [asyncio.ensure_future(drain(ws)) for ws in sockets]
    print(f"READY {len(sockets)} {opened_s:.3f}", flush=True)
    # Told "pings", the sockets start pinging as tabs do; told "close" (or at the end of its input), they close.
    loop = asyncio.get_running_loop()
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "pings":
        readers += [asyncio.ensure_future(keep_alive(ws)) for ws in sockets]
    still_open = sum(1 for ws in sockets if ws.state.name == "OPEN")
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    for reader in readers:
        reader.cancel()
    return {
        "opened": len(sockets),
        "failures": failures[:20],
        "failed": len(failures),
        "open_seconds": opened_s,
        "still_open": still_open,
        "frames_while_idle": received[0],
    }


# --- storm ---------------------------------------------------------------------------------------


class Follower:
    """A socket following one thread: the numbered events of that thread it received, in order."""

    def __init__(self, target: dict, thread: str):
        self.target = target
        self.thread = thread
        self.ws = None
        self.snapshot_seq: int | None = None
        self.seqs: list[int] = []
        self.stamps: list[int] = []
        self.delta_ns: list[int] = []
        self.latency_us: list[int] = []
        self.done = asyncio.Event()
        self.resume_s: float | None = None
        self.resumed_by_snapshot = False
        self.dropped_at: float | None = None
        self.failed_attempts = 0
        self.connect_s: float | None = None
        self.resumed_after: int | None = None

    @property
    def last_seq(self) -> int:
        return self.seqs[-1] if self.seqs else self.snapshot_seq

    async def start(self) -> None:
        self.ws = await open_socket(self.target)
        await self.ws.send(subscribe_frame(self.thread, None))
        while True:
            event = json.loads(await self.ws.recv())
            if event.get("type") == "thread.snapshot":
                self.snapshot_seq = event["seq"]
                return

    async def read(self, resubscribed_at: float | None = None) -> None:
        try:
            async for raw in self.ws:
                now = time.time_ns()
                event = json.loads(raw)
                if event.get("thread") != self.thread or "seq" not in event:
                    continue
                if resubscribed_at is not None:
                    self.resume_s = time.perf_counter() - resubscribed_at
                    resubscribed_at = None
                if event["type"] == "thread.snapshot":
                    self.resumed_by_snapshot = True
                    continue
                self.seqs.append(event["seq"])
                if event["type"] == "message.delta":
                    self.delta_ns.append(now)
                    for seq, latency in decode(event["text"], now // 1000):
                        self.stamps.append(seq)
                        self.latency_us.append(latency)
                if event["type"] in TERMINAL:
                    self.done.set()
                    return
        except Exception:
            return  # dropped (by us): the storm reconnects

    async def drop_and_return(self, within: float) -> None:
        self.dropped_at = time.perf_counter()
        self.ws.transport.abort()  # no close handshake: as a phone losing its network
        await asyncio.sleep(random.uniform(0, within))
        started = time.perf_counter()
        # As the page does (static/chat/socket.js): a refused or broken handshake is tried again after a pause.
        for attempt in range(RECONNECT_ATTEMPTS):
            try:
                self.ws = await open_socket(self.target, timeout=30)
                break
            except Exception:
                self.failed_attempts += 1
                if attempt == RECONNECT_ATTEMPTS - 1:
                    return
                await asyncio.sleep(min(0.5 * 2**attempt, 4) * random.uniform(0.8, 1.2))
        self.connect_s = time.perf_counter() - started
        self.resumed_after = self.last_seq
        await self.ws.send(subscribe_frame(self.thread, self.last_seq))
        await self.read(resubscribed_at=started)

    def summary(self) -> dict:
        expected = list(range(self.snapshot_seq + 1, self.snapshot_seq + 1 + len(self.seqs)))
        unique = set(self.seqs)
        return {
            "events": len(self.seqs),
            "exact": self.seqs == expected,
            "duplicates": len(self.seqs) - len(unique),
            "gaps": (max(self.seqs) - self.snapshot_seq - len(unique)) if self.seqs else 0,
            "missing": sorted(set(range(self.snapshot_seq + 1, max(self.seqs, default=0) + 1)) - unique)[:20],
            "resumed_after": self.resumed_after,
            "tokens": len(set(self.stamps)),
            "token_duplicates": len(self.stamps) - len(set(self.stamps)),
            "completed": self.done.is_set(),
            "resume_s": self.resume_s,
            "by_snapshot": self.resumed_by_snapshot,
            "failed_attempts": self.failed_attempts,
            "connect_s": self.connect_s,
        }


async def storm(job: dict) -> dict:
    gate = asyncio.Semaphore(50)

    async def started(follower: Follower) -> Follower:
        async with gate:
            await follower.start()
        return follower

    threads = job["threads"]
    steady = [Follower(t["steady"], t["thread"]) for t in threads]
    droppers = [Follower(d, t["thread"]) for t in threads for d in t["droppers"]]
    await asyncio.gather(*(started(f) for f in steady + droppers))
    readers = [asyncio.ensure_future(f.read()) for f in steady + droppers]
    for follower, thread in zip(steady, threads, strict=True):
        await follower.ws.send(send_frame(thread["thread"], thread["message"]))
    storm_started = time.time_ns()
    await asyncio.sleep(job["drop_after"])
    storm_at = time.time_ns()
    returns = [asyncio.ensure_future(f.drop_and_return(job["reconnect_within"])) for f in droppers]
    try:
        async with asyncio.timeout(job.get("timeout", 600)):
            await asyncio.gather(*returns, *(f.done.wait() for f in steady))
    except TimeoutError:
        pass
    for reader in readers:
        reader.cancel()
    await asyncio.gather(*(f.ws.close() for f in steady + droppers), return_exceptions=True)
    window_end = storm_at + int((job["reconnect_within"] + 1) * 1e9)

    def longest_gap_ms(times: list[int], start: int, end: int) -> float:
        inside = [t for t in times if start <= t <= end]
        gaps = [(b - a) / 1e6 for a, b in itertools.pairwise(inside)]
        return max(gaps) if gaps else 0.0

    return {
        "droppers": [f.summary() for f in droppers],
        "steady": [
            {
                **f.summary(),
                "gap_before_ms": longest_gap_ms(f.delta_ns, storm_started + int(1e9), storm_at),
                "gap_during_ms": longest_gap_ms(f.delta_ns, storm_at, window_end),
                "latency_us": f.latency_us,
            }
            for f in steady
        ],
    }


# --- cycles --------------------------------------------------------------------------------------


async def cycles(job: dict) -> dict:
    failures: list[str] = []
    done = [0]
    targets = job["targets"]
    queue = iter(range(job["count"]))

    async def loop() -> None:
        for n in queue:
            try:
                ws = await open_socket(targets[n % len(targets)])
                await ws.send('{"type": "ping"}')
                await ws.recv()
                await ws.close()
                done[0] += 1
            except Exception as error:
                failures.append(repr(error))

    started = time.perf_counter()
    await asyncio.gather(*(loop() for _ in range(job.get("concurrency", 20))))
    return {
        "cycles": done[0],
        "failed": len(failures),
        "failures": failures[:20],
        "seconds": time.perf_counter() - started,
    }


MODES = {"streams": streams, "idle": idle, "storm": storm, "cycles": cycles}


def main() -> None:
    mode = sys.argv[1]
    job = json.loads(sys.stdin.readline())
    print(json.dumps(asyncio.run(MODES[mode](job))), flush=True)


if __name__ == "__main__":
    main()
