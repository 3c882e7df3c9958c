"""The app with bench-only changes applied at start-up, to measure what a change would buy before anyone makes
it in the app: `python -m bench --variant no-dispatch-hop,persistent-db`. Daphne serves
`bench.variant_asgi:application` instead of `agentweb.asgi:application`; nothing in the app's files changes.

Variants (comma-separated in BENCH_VARIANTS):

- `no-dispatch-hop`: channels' AsyncConsumer.dispatch awaits `aclose_old_connections()` (a sync_to_async call,
  i.e. a hop to the one thread-sensitive worker thread and back) before every message it dispatches,
  `thread.event` included: one hop per delta frame per socket. This variant skips it for `thread.event`,
  whose handler only sends the already-serialised text and never touches the database.
- `persistent-db`: CONN_MAX_AGE None instead of 0, so the worker thread keeps its SQLite connection instead of
  opening a new one (and running the WAL pragmas) for nearly every database_sync_to_async call.
- `gc-freeze`: everything loaded at start-up moved out of the cyclic collector's reach (`gc.freeze()`), so
  its full collections walk only what the running app made.
- `stall-watch`: a thread that notices when the event loop has not turned for 15 ms and records what the
  loop's thread was doing (its stack, sampled every 2 ms while stalled) to $BENCH_STALLS at exit.
- `profile`: cProfile on the event loop's thread, written to $BENCH_PROFILE (default
  `bench/results/profile-{pid}.prof`) when the process exits or is sent SIGUSR1.
- `stock-…`, `no-send-now`, `no-shared-frame`, `no-take-now`: the library's own behaviour in place of one of
  agentweb's reach-ins into it (bench/stock_variants.py). Those of agentweb/serve.py need Daphne started as
  `python -m bench.variant_serve` (bench/app.py and bench/production/cluster.py do, given a variant).
"""

from __future__ import annotations

import os

from agentweb.asgi import application  # Django is set up by this import
from bench import stock_variants

VARIANTS = frozenset(filter(None, os.environ.get("BENCH_VARIANTS", "").split(",")))
KNOWN = frozenset({"no-dispatch-hop", "persistent-db", "profile", "gc-freeze", "stall-watch", "page-timing"})
if VARIANTS - KNOWN - stock_variants.KNOWN:
    raise SystemExit(f"unknown bench variant(s): {', '.join(sorted(VARIANTS - KNOWN - stock_variants.KNOWN))}")

stock_variants.apply(VARIANTS, application)

if "no-dispatch-hop" in VARIANTS:
    from channels.consumer import get_handler_name
    from channels.db import aclose_old_connections

    from chat.consumers import ChatConsumer

    async def dispatch(self, message):
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        if message["type"] != "thread.event":
            await aclose_old_connections()
        await handler(message)

    ChatConsumer.dispatch = dispatch

if "persistent-db" in VARIANTS:
    from django.conf import settings

    settings.DATABASES["default"]["CONN_MAX_AGE"] = None

if "gc-freeze" in VARIANTS:
    import gc

    gc.collect()
    gc.freeze()

if "profile" in VARIANTS:
    import atexit
    import cProfile
    import signal

    _profile = cProfile.Profile()
    _profile.enable()

    def _dump(*_):
        _profile.disable()
        # One file per process (the production benchmarks start several): "{pid}" in the path is its pid.
        path = os.environ.get("BENCH_PROFILE", "bench/results/profile-{pid}.prof").replace("{pid}", str(os.getpid()))
        _profile.dump_stats(path)

    atexit.register(_dump)
    signal.signal(signal.SIGUSR1, _dump)

if "stall-watch" in VARIANTS:
    import asyncio
    import atexit
    import sys
    import threading
    import time
    import traceback
    from collections import Counter

    _beat = [time.perf_counter()]
    _stalls: list[Counter] = []

    def _heartbeat(loop):
        _beat[0] = time.perf_counter()
        loop.call_later(0.002, _heartbeat, loop)

    def _watch(loop_thread: int):
        while True:
            time.sleep(0.002)
            lag = time.perf_counter() - _beat[0]
            if lag < 0.015:
                continue
            stacks: Counter = Counter()
            while time.perf_counter() - _beat[0] >= 0.01:
                frame = sys._current_frames().get(loop_thread)
                if frame is not None:
                    stacks["".join(traceback.format_stack(frame, limit=14))] += 1
                time.sleep(0.002)
            _stalls.append(stacks)

    _original_run_forever = asyncio.BaseEventLoop.run_forever

    def _run_forever(self):
        self.call_soon(_heartbeat, self)
        threading.Thread(target=_watch, args=(threading.get_ident(),), daemon=True).start()
        return _original_run_forever(self)

    asyncio.BaseEventLoop.run_forever = _run_forever

    import gc

    _gc_started = [0.0]
    _gc_pauses: list[tuple[int, float]] = []

    def _time_gc(phase, info):
        if phase == "start":
            _gc_started[0] = time.perf_counter()
        else:
            _gc_pauses.append((info["generation"], time.perf_counter() - _gc_started[0]))

    gc.callbacks.append(_time_gc)

    def _dump_stalls(*_):
        with open(os.environ.get("BENCH_STALLS", "bench-stalls.txt"), "w") as out:
            out.write(f"{len(_stalls)} stalls over 15 ms\n")
            for generation in range(3):
                pauses = sorted(p for g, p in _gc_pauses if g == generation)
                if pauses:
                    out.write(
                        f"gc generation {generation}: {len(pauses)} collections, longest {pauses[-1] * 1000:.1f} ms, "
                        f"total {sum(pauses) * 1000:.0f} ms\n"
                    )
            for stacks in sorted(_stalls, key=lambda s: -sum(s.values()))[:30]:
                out.write(f"\n=== stall, {sum(stacks.values())} samples\n")
                for stack, count in stacks.most_common(3):
                    out.write(f"--- {count}x\n{stack}")

    atexit.register(_dump_stalls)
    import signal

    signal.signal(signal.SIGUSR2, _dump_stalls)

if "page-timing" in VARIANTS:
    # Where a page's time goes: its hops to a thread (how many, their wall time and the thread's CPU time inside)
    # and everything else (the event loop's part and waiting for it); the slowest pages to $BENCH_PAGES at exit.
    import atexit
    import contextvars
    import signal
    import time

    from asgiref.sync import SyncToAsync

    # The app's handler (agentweb/adapters/django.py) has its own handle(), Django's is not called.
    from agentweb.adapters.django import ASGIHandlerInOneTrip as ASGIHandler

    _pages: list[dict] = []
    _record: contextvars.ContextVar[dict | None] = contextvars.ContextVar("bench_page", default=None)
    _original_call = ASGIHandler.handle
    _original_thread_handler = SyncToAsync.thread_handler

    async def _timed_call(self, scope, receive, send):
        record = {"start": time.perf_counter(), "hops": 0, "in_threads": 0.0, "cpu": 0.0}
        _record.set(record)

        async def marked_send(message):
            if message["type"] == "http.response.start":
                record.setdefault("marks", []).append(("send", time.perf_counter()))
            await send(message)

        try:
            return await _original_call(self, scope, receive, marked_send)
        finally:
            record["end"] = time.perf_counter()
            _pages.append(record)

    def _timed_thread_handler(self, loop, exc_info, task_context, func, *args, **kwargs):
        record = _record.get()
        if record is None:
            return _original_thread_handler(self, loop, exc_info, task_context, func, *args, **kwargs)
        started, cpu0 = time.perf_counter(), time.thread_time()
        record.setdefault("marks", []).append(("in", started))
        try:
            return _original_thread_handler(self, loop, exc_info, task_context, func, *args, **kwargs)
        finally:
            record["marks"].append(("out", time.perf_counter()))
            record["hops"] += 1
            record["in_threads"] += time.perf_counter() - started
            record["cpu"] += time.thread_time() - cpu0

    _original_s2a_call = SyncToAsync.__call__

    async def _timed_s2a_call(self, *args, **kwargs):
        record = _record.get()
        if record is not None:
            record.setdefault("marks", []).append(("submit", time.perf_counter()))
        try:
            return await _original_s2a_call(self, *args, **kwargs)
        finally:
            if record is not None:
                record["marks"].append(("resume", time.perf_counter()))

    ASGIHandler.handle = _timed_call
    SyncToAsync.thread_handler = _timed_thread_handler
    SyncToAsync.__call__ = _timed_s2a_call

    def _dump_pages(*_):
        rows = sorted(_pages, key=lambda r: r["end"] - r["start"], reverse=True)
        with open(os.environ.get("BENCH_PAGES", "bench-pages.txt"), "w") as out:
            out.write(f"{len(rows)} pages; ms: total = in threads (their CPU) over hops + the rest\n")
            for r in rows[:25] + rows[len(rows) // 2 : len(rows) // 2 + 3]:
                total = r["end"] - r["start"]
                out.write(
                    f"{total * 1e3:7.1f} = {r['in_threads'] * 1e3:6.1f} ({r['cpu'] * 1e3:4.1f}) over {r['hops']}"
                    f" + {(total - r['in_threads']) * 1e3:6.1f}  |  "
                    + " ".join(f"{name} {(t - r['start']) * 1e3:.1f}" for name, t in r.get("marks", []))
                    + f" end {total * 1e3:.1f}\n"
                )

    atexit.register(_dump_pages)
    signal.signal(signal.SIGUSR2, _dump_pages)
