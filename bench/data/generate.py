"""Realistic rows, fast: a team's year of chats at a given number of messages.

Shape (scaled down below 10k, where the full shape does not fit): one heavy person with HEAVY_CHATS chats, one of
them HEAVY_CHAT messages long; the team's other people (TEAM) with chats of ~20 messages. A turn is a user
message and an answer; every fifth answer first calls a tool (a ToolCall row and a tool message), every model
call has a Usage row, every twentieth user message an attachment row, every fiftieth user message an older
version (edited: hidden, with its answer). Texts draw words from a Zipf-like vocabulary, so a search finds rare
and common words as it would in real text. Dates spread over the last year.

Rows are made as tuples (bench/data/generate.py Table) and written without the ORM's per-row work: COPY on
PostgreSQL (the full-text index built after the load, bulk_load), executemany in one transaction on SQLite; ids are
given here (and sequences reset after), so rows can point at each other.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import random
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.core.management.color import no_style
from django.db import DatabaseError, connection, transaction

TEAM = 100
HEAVY_CHATS = 10_000
HEAVY_CHAT = 10_000
CHAT_LENGTH = 20
BATCH = 50_000
SEED = 42
# PostgreSQL's chat_message.owner_id (chat/migrations/0025): written with each message, as its trigger would have.
EXTRA_COLUMNS = {"chat_message": ("owner_id",)}
YEAR = timedelta(days=365)
# A word no generated text holds: a search for it reads the index and finds nothing.
NEVER = "zzzunfound"
# One word put in one message of each chat of the heavy person's: a search that finds a word in many threads.
MARKER = "quarterlyplan"


def vocabulary(rng: random.Random, size: int = 6000) -> tuple[list[str], list[float]]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da", "fi", "go", "pu", "re", "zo", "an", "el"]
    words = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(size * 2)})[:size]
    rng.shuffle(words)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    return words, weights


@dataclass
class Plan:
    messages: int
    heavy_chats: int
    heavy_chat: int
    people: int = TEAM

    @classmethod
    def for_size(cls, messages: int) -> Plan:
        # Full shape from 100k on; below, the heavy person's share of the rows stays what it is at 100k.
        return cls(messages, min(HEAVY_CHATS, max(10, messages // 10)), min(HEAVY_CHAT, max(40, messages // 10)))


@dataclass
class Made:
    heavy_user: int = 0
    other_user: int = 0
    heavy_thread: str = ""
    small_thread: str = ""
    other_thread: str = ""
    counts: dict = field(default_factory=dict)


class Table:
    """A model's columns, their defaults and how a value is written: rows are tuples, not model instances (a
    million instances and their per-field preparation took most of a 1M generation)."""

    def __init__(self, model):
        self.model = model
        self.fields = list(model._meta.concrete_fields)
        # Columns the database has and the model does not (written as given, None unless given).
        self.extra = list(EXTRA_COLUMNS.get(model._meta.db_table, ())) if connection.vendor == "postgresql" else []
        self.columns = [f.column for f in self.fields] + self.extra
        self.index = {f.attname: i for i, f in enumerate(self.fields)}
        self.index.update({name: len(self.fields) + i for i, name in enumerate(self.extra)})
        now = datetime.now(UTC)
        # get_default: the field's default, else "" for text that takes it, else None.
        auto = [getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False) for f in self.fields]
        self.defaults = [now if is_auto else f.get_default() for f, is_auto in zip(self.fields, auto, strict=True)]
        self.defaults += [None] * len(self.extra)
        self.convert = [_converter(f) for f in self.fields] + [None] * len(self.extra)

    def row(self, values: dict) -> tuple:
        row = list(self.defaults)
        for name, value in values.items():
            row[self.index[name]] = value
        pairs = zip(row, self.convert, strict=True)
        return tuple(value if convert is None else convert(value) for value, convert in pairs)


def _converter(field):
    """None where the driver takes the Python value as it is (the common case: ints, text, dates on PostgreSQL)."""
    from django.db.models import JSONField

    if isinstance(field, JSONField):
        return lambda value: None if value is None else json.dumps(value)
    if connection.vendor == "postgresql":
        return None
    return lambda value: field.get_db_prep_save(value, connection)


class Writer:
    """Rows per model, written in batches."""

    def __init__(self):
        self.tables: dict[type, Table] = {}
        self.pending: dict[type, list] = {}
        self.counts: dict[str, int] = {}

    def add(self, model, **values) -> None:
        table = self.tables.get(model) or self.tables.setdefault(model, Table(model))
        rows = self.pending.setdefault(model, [])
        rows.append(table.row(values))
        if len(rows) >= BATCH:
            self.flush(model)

    def flush(self, model=None) -> None:
        for m in [model] if model else list(self.pending):
            rows = self.pending.get(m) or []
            if rows:
                write_rows(self.tables[m], rows)
                self.counts[m._meta.label] = self.counts.get(m._meta.label, 0) + len(rows)
            self.pending[m] = []


def write_rows(table: Table, rows: list[tuple]) -> None:
    columns = ", ".join(connection.ops.quote_name(column) for column in table.columns)
    name = connection.ops.quote_name(table.model._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {name} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(table.columns))
            cursor.executemany(f"INSERT INTO {name} ({columns}) VALUES ({marks})", rows)


def generate(messages: int, seed: int = SEED) -> Made:
    """Write about `messages` messages (and what goes with them) into the empty, migrated database."""
    from attachments.models import Attachment
    from chat.models import Message, Run, Thread, ToolCall, Usage

    rng = random.Random(seed)
    words, weights = vocabulary(rng)
    # Cumulative once: random.choices with `weights` adds all 6,000 up again at every call.
    cumulative = list(itertools.accumulate(weights))
    plan = Plan.for_size(messages)
    writer = Writer()
    made = Made()
    User = get_user_model()
    start = datetime.now(UTC) - YEAR
    step = timedelta(seconds=30)

    def text(low: int, high: int) -> str:
        return " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(low, high))).capitalize() + "."

    with transaction.atomic(), bulk_load():
        for n in range(1, plan.people + 2):
            admin = n == plan.people + 1
            writer.add(
                User,
                id=n,
                username="admin" if admin else f"person{n}",
                password="!",
                is_active=True,
                is_staff=admin,
                is_superuser=admin,
                date_joined=start,
            )
        writer.flush()
        made.heavy_user, made.other_user = 1, 2
        ids = {"message": 0, "run": 0, "usage": 0}

        def next_id(kind: str) -> int:
            ids[kind] += 1
            return ids[kind]

        owner_of = {}
        with_owner = connection.vendor == "postgresql"

        def message(thread_id, when, **values) -> int:
            pk = next_id("message")
            if with_owner:
                values["owner_id"] = owner_of[thread_id]
            writer.add(Message, id=pk, thread_id=thread_id, created_at=when, updated_at=when, **values)
            return pk

        def chat(owner: int, length: int, when: datetime, marker: bool = False) -> str:
            thread_id = uuid.uuid4()
            owner_of[thread_id] = owner
            created = when
            order = written = turn = 0
            before = None  # the branch's last message: a question's parent, as the app sets it (versions)
            while written < length:
                turn += 1
                run = next_id("run")
                writer.add(
                    Run,
                    id=run,
                    thread_id=thread_id,
                    status="completed",
                    steps=1,
                    model_label="bench",
                    started_at=when,
                    finished_at=when,
                )
                order += 1
                body = text(4, 40)
                if marker and turn == 1:
                    body = f"{MARKER} {body}"
                if turn % 50 == 0:  # an older version of this question, edited since: hidden with its answer
                    old = ids["message"] + 1
                    message(thread_id, when, order=order, role="user", content=text(4, 40), active=False,
                            hidden_under=old, parent_id=before)  # fmt: skip
                    message(thread_id, when, order=order + 1, role="assistant", content=text(20, 120), active=False,
                            hidden_under=old, parent_id=old)  # fmt: skip
                    written += 2
                asked = message(thread_id, when, run_id=run, order=order, role="user", content=body, parent_id=before)
                if turn % 20 == 0:
                    writer.add(
                        Attachment,
                        id=uuid.uuid4(),
                        owner_id=owner,
                        thread_id=thread_id,
                        message_id=asked,
                        name="notes.txt",
                        content_type="text/plain",
                        kind="text",
                        size=2048,
                        path=f"attachments/bench/{asked}.txt",
                        text=text(50, 100),
                        created_at=when,
                    )
                written += 1
                calls = 2 if turn % 5 == 0 else 1
                for call in range(calls):
                    when += step
                    order += 1
                    last = call == calls - 1
                    tokens = 800 + 40 * order
                    answer = message(
                        thread_id,
                        when,
                        run_id=run,
                        order=order,
                        role="assistant",
                        parent_id=asked if call == 0 else None,
                        content=text(20, 120) if last else "",
                        usage={"input_tokens": tokens, "output_tokens": 200},
                    )
                    before = answer
                    writer.add(
                        Usage,
                        id=next_id("usage"),
                        user_id=owner,
                        thread_id=thread_id,
                        run_id=run,
                        model_label="bench",
                        input_tokens=tokens,
                        output_tokens=200,
                        created_at=when,
                    )
                    written += 1
                    if not last:
                        call_id = f"call_{answer}"
                        writer.add(
                            ToolCall,
                            id=uuid.uuid4(),
                            message_id=answer,
                            call_id=call_id,
                            name="calculator",
                            args={"expression": "6*7"},
                            status="success",
                            result="42",
                            created_at=when,
                        )
                        order += 1
                        message(thread_id, when, order=order, role="tool", tool_call_id=call_id, name="calculator",
                                content="42")  # fmt: skip
                        written += 1
            # Written after its messages (the foreign keys are checked at the commit, or not at all: bulk_load).
            writer.add(
                Thread,
                id=thread_id,
                owner_id=owner,
                title=text(2, 5)[:200],
                created_at=created,
                updated_at=when,
                has_versions=turn >= 50,
            )
            return str(thread_id)

        span = YEAR.total_seconds()
        # The heavy chat, then the heavy person's other chats, then everyone else's until the size is reached.
        made.heavy_thread = chat(made.heavy_user, plan.heavy_chat, start + timedelta(days=1))
        for n in range(plan.heavy_chats - 1):
            when = start + timedelta(seconds=span * (n + 1) / plan.heavy_chats)
            thread = chat(made.heavy_user, 4, when, marker=True)
            if n == plan.heavy_chats - 2:
                made.small_thread = thread
        n = 0
        while ids["message"] < messages:
            n += 1
            owner = 2 + (n - 1) % (plan.people - 1)
            when = start + timedelta(seconds=rng.uniform(0, span))
            thread = chat(owner, CHAT_LENGTH, when)
            if owner == made.other_user and not made.other_thread:
                made.other_thread = thread
        writer.flush()
        with connection.cursor() as cursor:
            for sql in connection.ops.sequence_reset_sql(no_style(), [User, Message, Run, Usage]):
                cursor.execute(sql)
    if connection.vendor == "postgresql":
        # As a database that grew over a year is: vacuumed and analysed, not a million rows just loaded whose
        # visibility autovacuum would set (PostgreSQL 13+ vacuums after inserts) while the figures are measured.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    settle_disk()
    made.counts = writer.counts
    return made


def settle_disk() -> None:
    """What the load wrote, on disk before anything is measured: PostgreSQL's dirty buffers by a checkpoint (else the
    one after a million rows writes them out over minutes while the figures are taken; superuser only), SQLite's
    write-ahead log into its file, then the kernel's dirty pages of either. A single page load at 1M took 243 ms to
    come (p50 59)."""
    statement = "CHECKPOINT" if connection.vendor == "postgresql" else "PRAGMA wal_checkpoint(TRUNCATE)"
    try:
        with connection.cursor() as cursor:
            cursor.execute(statement)
    except DatabaseError:  # not allowed: the checkpoints come as the database schedules them
        pass
    os.sync()


@contextmanager
def bulk_load():
    """On PostgreSQL: the full-text index built once after the rows are in (as migrations 0021 and 0025 build it on an
    installation's messages), not grown row by row; and the triggers off for the load (superuser only): the foreign
    keys' (the rows are made consistent here, and a million deferred checks would be queued until the commit) and
    the one that copies a chat's owner onto its messages (a chat is written after its messages here, each message with
    its owner already: EXTRA_COLUMNS); 0025's backfill then finds nothing to write."""
    if connection.vendor != "postgresql":
        yield  # SQLite: the FTS5 triggers index each row as the app's writes do
        return
    full_text = importlib.import_module("chat.migrations.0025_message_search_owner")
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS chat_message_fts_owner")
        try:
            with transaction.atomic():
                cursor.execute("SET LOCAL session_replication_role = replica")
        except DatabaseError:  # not a superuser: the checks stay, queued until the commit
            pass
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = DEFAULT")
        cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")
        cursor.execute(full_text.BACKFILL)
        cursor.execute(full_text.INDEX)
