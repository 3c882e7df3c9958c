"""worker-kill: `kill -9` the run worker while 50 streams and 10 tool calls run in it. Every run must end
interrupted with the text its tab had seen, Retry must work, no tool may run twice, and a second worker must
pick up new runs.

The heartbeat is shortened as tests/e2e/test_production.py shortens it (AGENTWEB_HEARTBEAT_SECONDS 0.5,
AGENTWEB_RUN_STALE_SECONDS 3) so that a dead worker's runs are seen as such after 3 s rather than 45 s."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter

from ..app import new_id
from ..common import Result
from ..tokens import STAMP_RE, Spec
from .cluster import ProductionApp
from .loadclient import open_socket, send_frame, subscribe_frame
from .measure import target, watched_connections

STALE_S = 3.0
TERMINAL = {"run.completed", "run.failed", "run.cancelled"}


class Tab:
    """One socket on one thread: every event it received, in order, with a way to wait for the next of a type."""

    def __init__(self, where: dict, thread: str):
        self.where = where
        self.thread = thread
        self.events: list[dict] = []
        self.changed = asyncio.Event()
        self.ws = None
        self.reader = None

    async def open(self) -> Tab:
        self.ws = await open_socket(self.where)
        self.reader = asyncio.ensure_future(self._read())
        return self

    async def _read(self) -> None:
        async for raw in self.ws:
            self.events.append(json.loads(raw))
            self.changed.set()

    async def until(self, types: set[str], after: int, timeout: float) -> dict:
        async with asyncio.timeout(timeout):
            while True:
                for event in self.events[after:]:
                    if event.get("type") in types and event.get("thread", self.thread) == self.thread:
                        return event
                self.changed.clear()
                await self.changed.wait()

    def tokens_seen(self) -> set[int]:
        return {
            int(seq, 36)
            for e in self.events
            if e.get("type") == "message.delta"
            for seq, _ in STAMP_RE.findall(e["text"])
        }

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


def stored_tokens(snapshot: dict) -> set[int]:
    answers = [m for m in snapshot["messages"] if m["role"] == "assistant"]
    return {int(seq, 36) for seq, _ in STAMP_RE.findall(answers[-1]["content"] or "")} if answers else set()


def tool_runs(app: ProductionApp) -> Counter:
    """How often each tool call started, by thread."""
    if not app.tool_log.exists():
        return Counter()
    return Counter(line.split()[2] for line in app.tool_log.read_text().splitlines() if line.strip())


async def worker_kill(app: ProductionApp, result: Result, smoke: bool) -> None:
    streams, tools = (5, 2) if smoke else (50, 10)
    rate, seconds = (50, 10) if smoke else (20, 60)
    kill_after = 1.5 if smoke else 8.0
    users = app.users[: streams + tools + 5]
    threads = await asyncio.to_thread(app.threads_for, users)
    app.tool_release.unlink(missing_ok=True)
    extra = {"AGENTWEB_HEARTBEAT_SECONDS": "0.5", "AGENTWEB_RUN_STALE_SECONDS": str(STALE_S)}
    with app.processes(daphnes=1, workers=1, **extra) as running, watched_connections(result, app, 3):
        daphne = running.daphnes[0]
        tabs = [Tab(target(daphne, cookie), thread) for (_, cookie), thread in zip(users, threads, strict=True)]
        await asyncio.gather(*(t.open() for t in tabs))
        streaming, calling, later = tabs[:streams], tabs[streams : streams + tools], tabs[streams + tools :]
        for tab in streaming:
            await tab.ws.send(
                send_frame(tab.thread, Spec(id=new_id("kill"), tokens=rate * seconds, rate=rate).message())
            )
        for n, tab in enumerate(calling):
            spec = Spec(
                id=new_id("kill-tool"),
                tokens=20,
                tools=1,
                extra={"tool": {"name": "hold", "arguments": {"key": f"t{n}"}}},
            )
            await tab.ws.send(send_frame(tab.thread, spec.message()))
        deadline = time.monotonic() + kill_after + 60
        await asyncio.sleep(kill_after)
        # Killed only once every run is under way (a busy machine takes a while to start sixty): each stream has
        # shown text and each tool call has started.
        while time.monotonic() < deadline and (
            sum(tool_runs(app).values()) < tools or not all(tab.tokens_seen() for tab in streaming)
        ):
            await asyncio.sleep(0.1)
        started_tools = tool_runs(app)
        seen = {tab.thread: tab.tokens_seen() for tab in streaming}
        running.workers[0].kill()
        killed_at = time.monotonic()
        await asyncio.sleep(STALE_S + 1)
        told = sum(1 for tab in streaming + calling if any(e.get("type") in TERMINAL for e in tab.events))
        running.add_worker("worker-second")
        await asyncio.sleep(1.0)
        # What a tab sees once it looks again (a reload, a reconnect): the run, and what was kept of its text.
        snapshots = {}
        for tab in streaming + calling:
            mark = len(tab.events)
            await tab.ws.send(subscribe_frame(tab.thread, None))
            snapshots[tab.thread] = await tab.until({"thread.snapshot"}, mark, 60)
        interrupted = [t for t, s in snapshots.items() if (s.get("run") or {}).get("status") == "interrupted"]
        kept = {tab.thread: stored_tokens(snapshots[tab.thread]) for tab in streaming}
        missing = {t: len(seen[t] - kept[t]) for t in seen}
        ran_twice_before_retry = {t: n for t, n in tool_runs(app).items() if n > 1}
        app.tool_release.touch()
        retried = []
        for tab in streaming + calling:
            mark = len(tab.events)
            await tab.ws.send(json.dumps({"type": "run.retry", "thread": tab.thread}))
            retried.append((tab, mark))
        endings = await asyncio.gather(
            *(tab.until(TERMINAL, mark, 600) for tab, mark in retried), return_exceptions=True
        )
        retry_ok = sum(1 for e in endings if isinstance(e, dict) and e["type"] == "run.completed")
        marks = [len(tab.events) for tab in later]
        for tab in later:
            await tab.ws.send(send_frame(tab.thread, Spec(id=new_id("after-kill"), tokens=50).message()))
        new_endings = await asyncio.gather(
            *(tab.until(TERMINAL, mark, 120) for tab, mark in zip(later, marks, strict=True)), return_exceptions=True
        )
        new_ok = sum(1 for e in new_endings if isinstance(e, dict) and e["type"] == "run.completed")
        second_log = running.workers[-1].log_tail(5)
        await asyncio.gather(*(t.close() for t in tabs), return_exceptions=True)
    runs_total = streams + tools
    partial = sum(1 for t in seen if seen[t] and not missing[t])
    result.details.update(
        streams=streams,
        tools=tools,
        kill_after=kill_after,
        tokens_seen={t: len(v) for t, v in seen.items()},
        tokens_kept={t: len(v) for t, v in kept.items()},
        tool_runs_at_kill=dict(started_tools),
        tool_runs_after_retry=dict(tool_runs(app)),
        told_without_asking=told,
        second_worker_log=second_log,
        seconds_after_kill=time.monotonic() - killed_at,
    )
    result.add(
        f"runs interrupted, of {runs_total} in the killed worker",
        len(interrupted),
        "",
        target=f"all {runs_total}",
        passed=len(interrupted) == runs_total,
        note=f"seen on the next thread.subscribe, {STALE_S:g} s stale limit + 1 s after the kill; "
        f"{told} of the {runs_total} tabs were told (run.failed) without asking",
    )
    result.add(
        "streams whose stored text holds every token their tab saw",
        partial,
        "",
        target=f"all {streams}",
        passed=partial == streams,
        note=f"tokens a tab saw that the stored text lacks: {sum(missing.values()):,} of "
        f"{sum(len(v) for v in seen.values()):,}",
    )
    result.add(
        "tool calls that ran twice",
        len(ran_twice_before_retry),
        "",
        target="0",
        passed=not ran_twice_before_retry and sum(started_tools.values()) == tools,
        note=f"{sum(started_tools.values())} of {tools} calls had started when the worker was killed; none started "
        "again before Retry",
    )
    result.add(
        f"retries completed, of {runs_total}",
        retry_ok,
        "",
        target=f"all {runs_total}",
        passed=retry_ok == runs_total,
        note="run.retry on every interrupted thread, run by the second worker",
    )
    result.add(
        f"new runs completed by the second worker, of {len(later)}",
        new_ok,
        "",
        target=f"all {len(later)}",
        passed=new_ok == len(later),
    )
