"""One size, one database: migrate, generate, measure; prints one JSON object (bench/data/__main__.py runs this in
a process of its own per size and database, with DATABASE_URL set, because Django reads it once).

    python -m bench.data.measure --messages 10000 --repeat 30

Times are server time, in-process (Django's test client, the real consumer under channels' communicator), so
the figures are the database's and the app's, not a network's. Each figure: p50 and p99 (of `repeat` runs;
with few runs p99 is their largest) and the SQL statements one run issued.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import statistics
import sys
import threading
import time
import tracemalloc
import uuid
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")


def percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2), "p99_ms": round(p99 * 1000, 2), "n": len(ordered)}


class FullCollections:
    """Python's full collections (generation 2) in this process from now on: how many, and the longest (ms). One
    walks every object the process holds that is not frozen: before the measuring froze them, a single first-page
    fetch or search of forty took 180-290 ms against 17-40 at p50, at any size, in runs with nothing else running."""

    def __init__(self):
        self.count, self.longest_ms, self.started = 0, 0.0, 0.0
        gc.callbacks.append(self.seen)

    def seen(self, phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.count += 1
            self.longest_ms = max(self.longest_ms, round((time.perf_counter() - self.started) * 1000, 1))


#: How a run's note is written (chat/store/steps.py add_run_note): a turn in a chat longer than its model's window
#: writes one, at any size of the data, to tell the person its oldest messages were left out.
NOTE_WRITE = 'UPDATE "chat_run" SET "notes"'


class Statements:
    """Every statement Django executes, in any thread, counted; and, of them, those that write a run's note."""

    def __init__(self):
        from django.db.backends.utils import CursorWrapper

        self.count = self.notes = 0
        self.lock = threading.Lock()
        original = CursorWrapper._execute_with_wrappers

        def counted(cursor, sql, params, many, executor):
            with self.lock:
                self.count += 1
                self.notes += sql.startswith(NOTE_WRITE)
            return original(cursor, sql, params, many, executor)

        CursorWrapper._execute_with_wrappers = counted

    def take(self) -> int:
        return self.take_both()[0]

    def take_both(self) -> tuple[int, int]:
        """(statements, note writes) since the last take."""
        with self.lock:
            taken, self.count, self.notes = (self.count, self.notes), 0, 0
        return taken


#: What each full collection kept, frozen as the served app's processes freeze it (agentweb/heap.py's HeapFreezer,
#: checked between two samples here as each second there): made in main once setup and generation are done.
FREEZER = None


def settle() -> None:
    if FREEZER is not None:
        FREEZER.check()


def timed(fn, repeat: int, statements: Statements, warm: int = 1) -> dict:
    for _ in range(warm):
        fn()
    samples, counts = [], []
    for _ in range(repeat):
        settle()
        statements.take()
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
        counts.append(statements.take())
    return {**percentiles(samples), "statements": max(counts)}


def page_plans(fn) -> list[str]:
    """On PostgreSQL, the plan's nodes (EXPLAIN ANALYZE) of each SELECT `fn` makes: whether a page's reads go through
    an index (issue 42)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "postgresql":
        return []
    with CaptureQueriesContext(connection) as read:
        fn()
    plans = []
    with connection.cursor() as cursor:
        for query in read.captured_queries:
            if query["sql"].lstrip().upper().startswith("SELECT"):
                cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + query["sql"])
                nodes = [row[0].strip() for row in cursor.fetchall()]
                plans.append(" | ".join(n for n in nodes if "Scan" in n or "Sort" in n or "Execution" in n))
    return plans


def client_for(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


def get_ok(client, url, data=None):
    response = client.get(url, data or {})
    assert response.status_code == 200, (url, response.status_code)
    return response


def database_size() -> dict:
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_database_size(current_database())")
            total = cursor.fetchone()[0]
            cursor.execute(
                """SELECT c.relname, pg_total_relation_size(c.oid), pg_relation_size(c.oid) FROM pg_class c
                   JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') ORDER BY 2 DESC LIMIT 14"""
            )
            largest = {name: {"total": t, "own": own} for name, t, own in cursor.fetchall()}
        else:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            total = Path(connection.settings_dict["NAME"]).stat().st_size
            largest = {}
            try:
                cursor.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 14")
                largest = {name: {"total": size, "own": size} for name, size in cursor.fetchall()}
            except Exception:  # dbstat is not compiled into every SQLite
                pass
    return {"bytes": total, "largest": largest}


async def ws_turn(user, thread_id: str, statements: Statements, repeat: int) -> dict:
    from channels.db import database_sync_to_async

    from tests.chat.conftest import Client, session_cookie

    client = await Client(await database_sync_to_async(session_cookie)(user)).connect()
    samples, counts, notes = [], [], []
    try:
        for n in range(repeat + 1):
            settle()
            statements.take()
            started = time.perf_counter()
            await client.ask(f"what is {n + 23}*19?", thread=thread_id)
            events = await client.until("run.completed", "run.failed", "run.cancelled", timeout=120)
            elapsed = time.perf_counter() - started
            assert events[-1]["type"] == "run.completed", events[-1]
            if n:  # the first warms the process
                samples.append(elapsed)
                count, noted = statements.take_both()
                counts.append(count)
                notes.append(noted)
    finally:
        await client.close()
    return {
        **percentiles(samples),
        "statements": max(counts),
        "statements_min": min(counts),
        # The turn's own statements, the note aside: what must not grow with the data (issue 42).
        "statements_besides_notes": max(c - n for c, n in zip(counts, notes, strict=True)),
        "note_writes": max(notes),
    }


def turn(user, thread_id: str, statements: Statements, repeat: int) -> dict:
    return asyncio.run(ws_turn(user, thread_id, statements, repeat))


STALL_S = 60
#: The demo model's context window in tokens during the run (a common size of today's models).
CONTEXT_WINDOW = 128_000


def who_waits() -> list:
    """On PostgreSQL, the statements of this database that wait, and on what (a fresh connection: the app's may be
    the ones stuck)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return []
    import psycopg

    params = connection.get_connection_params()
    keep = ("dbname", "user", "host", "port", "password")
    with psycopg.connect(**{k: v for k, v in params.items() if k in keep}) as c:
        rows = c.execute(
            """SELECT pid, state, wait_event_type, wait_event, pg_blocking_pids(pid), left(query, 160)
               FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"""
        ).fetchall()
    return [list(map(str, row)) for row in rows]


def delete_while_turning(heavy, other, thread_id: str, other_thread: str, statements: Statements) -> dict:
    """Delete the heavy chat (as its owner does, POST /t/<id>/delete) while another person's turns run one after
    another: how long the delete takes, and the other person's slowest turn meanwhile."""

    done = threading.Event()
    result = {}

    def delete():
        # In a process of its own, as another Daphne process would: a thread of this one calling the in-memory
        # channel layer from a loop of its own is not what a deployment does (and stalled this process's turns).
        import subprocess

        try:
            done_process = subprocess.run(
                [sys.executable, "-m", "bench.data.delete_one", str(heavy.pk), thread_id],
                capture_output=True,
                text=True,
                timeout=3600,
            )
            if done_process.returncode:
                result["delete_error"] = done_process.stderr[-2000:]
            else:
                result.update(json.loads(done_process.stdout.strip().splitlines()[-1]))
        except Exception as error:  # reported, not raised: the other turns' figures still count
            result["delete_error"] = f"{type(error).__name__}: {error}"
        finally:
            done.set()

    async def turns():
        from channels.db import database_sync_to_async

        from tests.chat.conftest import Client, session_cookie

        client = await Client(await database_sync_to_async(session_cookie)(other)).connect()
        samples = []
        try:
            await client.ask("warm", thread=other_thread)
            await client.until("run.completed", "run.failed", timeout=120)
            worker = threading.Thread(target=delete)
            worker.start()
            n = 0
            while not done.is_set() or n < 2:
                n += 1
                started = time.perf_counter()
                await client.ask(f"what is {n}*7?", thread=other_thread)
                try:
                    events = await client.until(
                        "run.completed", "run.failed", "run.cancelled", "error", timeout=STALL_S
                    )
                except TimeoutError:  # the finding itself: what waits on what, then the figures so far
                    samples.append(time.perf_counter() - started)
                    result["other_turn_stalled_s"] = STALL_S
                    result["waiting"] = await asyncio.to_thread(who_waits)
                    break
                samples.append(time.perf_counter() - started)
                result.setdefault("other_statuses", set()).add(events[-1]["type"])
            await asyncio.to_thread(worker.join, 4 * STALL_S)
        finally:
            await client.close()
        return samples

    samples = asyncio.run(turns())
    result["other_statuses"] = sorted(result.get("other_statuses", []))
    result["other_turn_max_ms"] = round(max(samples) * 1000, 1)
    result["other_turns"] = len(samples)
    return result


def export_heavy(client, thread_id: str, statements: Statements) -> dict:
    """The JSON export of the heavy chat: its time and statements, then, in a second run under tracemalloc (which
    slows every allocation several times over, so it is not timed), its peak memory."""

    def read() -> int:
        response = get_ok(client, f"/t/{thread_id}/export.json")
        return sum(len(chunk) for chunk in (response.streaming_content if response.streaming else [response.content]))

    statements.take()
    started = time.perf_counter()
    size = read()
    elapsed = time.perf_counter() - started
    count = statements.take()
    gc.collect()
    tracemalloc.start()
    read()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"ms": round(elapsed * 1000, 1), "statements": count, "peak_mib": round(peak / 2**20, 1), "bytes": size}


def chromium(heavy, thread, snapshot: dict, repeat: int, figures: dict) -> dict:
    """The heavy chat's first paint in Chromium and its scroll to the first message (bench/data/paint.py), into
    `figures`; or, without Chromium or playwright, the reason it was not measured."""
    from chat.models import Message
    from tests.chat.conftest import session_cookie

    from . import paint

    reason = paint.unavailable()
    if reason:
        print(f"  Chromium's figures skipped: {reason}", file=sys.stderr, flush=True)
        return {"chromium_skipped": reason}
    said = [m for m in snapshot["messages"] if m["role"] in ("user", "assistant")]
    shown = Message.objects.filter(thread=thread, role__in=["user", "assistant"])
    first = shown.order_by("order").first()
    try:
        measured = paint.measure(
            cookie=session_cookie(heavy).decode(),
            thread_id=str(thread.pk),
            newest=paint.snippet(said[-1]["content"]),
            first=paint.snippet(first.content),
            expected=shown.count(),
            snapshot=len(said),
            repeat=repeat,
        )
    except Exception as error:  # recorded, not raised: a long run keeps its other figures (the smoke fails on it)
        print(f"  Chromium's figures failed: {error}", file=sys.stderr, flush=True)
        return {"chromium_failed": f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"}
    loads = measured["loads"]
    figures["chromium_first_paint"] = percentiles([s["fcp"] / 1000 for s in loads])
    figures["chromium_newest_readable"] = percentiles([s["newest"] / 1000 for s in loads])
    figures["chromium_newest_readable"]["message_elements"] = min(s["shown"] for s in loads)
    figures["chromium_html"] = percentiles([s["response_end"] / 1000 for s in loads])
    return {"scroll_up": measured["scroll_up"]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, required=True)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from chat import store
    from chat.models import Thread
    from chat.store import search
    from chat.store.pages import PAGE_MESSAGES

    from .generate import MARKER, NEVER, SEED, generate, vocabulary

    settings.AGENTWEB_DEMO_DELAY = 0
    # The demo model with a known context window, as a deployment's model has one: a turn reads what it can hold.
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "context_window": CONTEXT_WINDOW}
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    out: dict = {"vendor": connection.vendor, "messages_asked": args.messages}
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    out["migrate_empty_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    made = generate(args.messages)
    out["generate_s"] = round(time.perf_counter() - started, 1)
    out["rows"] = made.counts
    out["size"] = database_size()
    print(f"  generated {made.counts} in {out['generate_s']} s", file=sys.stderr, flush=True)

    User = get_user_model()
    heavy, other = User.objects.get(pk=made.heavy_user), User.objects.get(pk=made.other_user)
    admin = User.objects.get(username="admin")
    # What setup and generation left is kept out of the collector's walks, as the served app's processes keep what
    # they hold (agentweb/heap.py): a full collection then walks only what the measuring made, as it would there.
    global FREEZER
    from agentweb.heap import HeapFreezer

    gc.collect()
    gc.freeze()
    FREEZER = HeapFreezer()
    collections = FullCollections()
    statements = Statements()
    repeat = args.repeat
    client = client_for(heavy)
    figures: dict = {}
    figures["first_page"] = timed(lambda: get_ok(client, "/"), repeat, statements)
    figures["first_page"]["plans"] = page_plans(lambda: get_ok(client, "/"))  # the sidebar's: thread_sidebar
    heavy_thread = Thread.objects.get(pk=made.heavy_thread)

    def open_heavy():
        get_ok(client, f"/t/{made.heavy_thread}/")
        thread = Thread.objects.get(pk=made.heavy_thread)
        # As the page asks for it (thread.subscribe with `paged`, issue 42): the newest page and its cursor.
        model = store.thread_model_info(thread)
        snapshot = store.build_snapshot(thread=thread, seq=thread.last_seq, model=model, page=PAGE_MESSAGES)
        json.dumps(snapshot)
        return snapshot

    figures["open_heavy_chat"] = timed(open_heavy, max(3, repeat // 3), statements)
    figures["open_heavy_chat"]["messages_shown"] = len(open_heavy()["messages"])
    # A page from the middle of the heavy chat, as scrolling up reads it (GET /t/<id>/messages?before=).
    middle = heavy_thread.messages.filter(role="user").order_by("order").values_list("pk", flat=True)
    middle = middle[middle.count() // 2]
    earlier = lambda: get_ok(client, f"/t/{made.heavy_thread}/messages", {"before": middle})  # noqa: E731
    figures["earlier_page"] = timed(earlier, repeat, statements)
    figures["earlier_page"]["plans"] = page_plans(lambda: (open_heavy(), earlier()))
    # In Chromium, before the turns and the delete change the heavy chat (bench/data/paint.py).
    out.update(chromium(heavy, heavy_thread, open_heavy(), max(3, repeat // 2), figures))

    # A common word of the heavy chat's (at 1M "anbene": in 13 % of everyone's messages, 7 % of the person's; the
    # first runs called it "rare"), its rarest (the vocabulary's Zipf rank: at 1M in 46 of the person's messages
    # and 872 of everyone's), a word in one message of each of the heavy person's chats, its prefix, a word in none.
    common = next(w for w in search.search_terms(heavy_thread.messages.order_by("-order")[3].content) if len(w) > 5)
    rank = {word: n for n, word in enumerate(vocabulary(random.Random(SEED))[0])}
    recent = heavy_thread.messages.filter(role__in=search.ROLES).order_by("-order").values_list("content", flat=True)
    rare = max({w for text in recent[:200] for w in search.search_terms(text)}, key=lambda w: rank.get(w, -1))
    queries = {"common": common, "rare": rare, "in_every_chat": MARKER, "nowhere": NEVER, "prefix": MARKER[:5]}
    for name, query in queries.items():
        sidebar = lambda q=query: get_ok(client, "/search", {"q": q})  # noqa: E731
        figures[f"sidebar_search_{name}"] = timed(sidebar, repeat, statements)
        figures[f"tool_search_{name}"] = timed(
            lambda q=query: store.search_messages(user=heavy, query=q, limit=5), repeat, statements
        )
    figures["sidebar_search_common"]["query"] = common
    figures["sidebar_search_rare"]["query"] = rare

    staff = client_for(admin)
    month = heavy_thread.created_at
    figures["usage_report_month"] = timed(
        lambda: get_ok(staff, "/admin/chat/usage/", {"created_at__year": month.year, "created_at__month": month.month}),
        max(3, repeat // 3),
        statements,
    )
    turns = max(3, repeat // 5)
    figures["turn_small_chat"] = turn(heavy, made.small_thread, statements, turns)
    figures["turn_heavy_chat"] = turn(heavy, made.heavy_thread, statements, max(2, turns // 2))
    figures["turn_other_person"] = turn(other, made.other_thread, statements, turns)
    out["export"] = export_heavy(client, made.heavy_thread, statements)
    out["delete"] = delete_while_turning(heavy, other, made.heavy_thread, made.other_thread, statements)
    # The last migrations on this data: 0021 builds the full-text index over every message there is; 0025 (with
    # 0022-0024 before it) writes each message's owner and builds that index again keyed by person.
    started = time.perf_counter()
    call_command("migrate", "chat", "0020_group_token_budget", verbosity=0)
    out["unmigrate_search_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    call_command("migrate", "chat", "0021_message_full_text_search", verbosity=0)
    out["migrate_search_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    out["migrate_search_owner_s"] = round(time.perf_counter() - started, 2)
    out["figures"] = figures
    out["full_collections"] = {"count": collections.count, "longest_ms": collections.longest_ms}
    out["id"] = str(uuid.uuid4())
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
