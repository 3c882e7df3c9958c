"""Realistic rows, fast: a team's year of chats at a given number of messages.

Shape (scaled down below 10k, where the full shape does not fit): one heavy person with HEAVY_CHATS chats, one of
them HEAVY_CHAT messages long; the team's other people (TEAM) with chats of ~20 messages. A turn is a user
message and an answer; every fifth answer first calls a tool (a ToolCall row and a tool message), every model
call has a Usage row, every twentieth user message an attachment row, every fiftieth user message an older
version (edited: hidden, with its answer). Texts draw words from a Zipf-like vocabulary, so a search finds rare
and common words as it would in real text. Dates spread over the last year.

Rows are made as model instances and written without the ORM's per-row work: COPY on PostgreSQL, executemany in
one transaction on SQLite; ids are given here (and sequences reset after), so rows can point at each other.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.core.management.color import no_style
from django.db import connection, transaction

TEAM = 100
HEAVY_CHATS = 10_000
HEAVY_CHAT = 10_000
CHAT_LENGTH = 20
BATCH = 20_000
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


class Writer:
    """Instances per model, written in batches."""

    def __init__(self):
        self.pending: dict[type, list] = {}
        self.counts: dict[str, int] = {}

    def add(self, obj) -> None:
        rows = self.pending.setdefault(type(obj), [])
        rows.append(obj)
        if len(rows) >= BATCH:
            self.flush(type(obj))

    def flush(self, model=None) -> None:
        for m in [model] if model else list(self.pending):
            rows = self.pending.get(m) or []
            if rows:
                write_rows(m, rows)
                self.counts[m._meta.label] = self.counts.get(m._meta.label, 0) + len(rows)
            self.pending[m] = []


def write_rows(model, objs) -> None:
    fields = list(model._meta.concrete_fields)
    now = datetime.now(UTC)
    rows = []
    for obj in objs:
        row = []
        for f in fields:
            value = getattr(obj, f.attname)
            if value is None and (getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)):
                value = now
            row.append(f.get_db_prep_save(value, connection))
        rows.append(row)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(fields))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def generate(messages: int, seed: int = 42) -> Made:
    """Write about `messages` messages (and what goes with them) into the empty, migrated database."""
    from attachments.models import Attachment
    from chat.models import Message, Run, Thread, ToolCall, Usage

    rng = random.Random(seed)
    words, weights = vocabulary(rng)
    plan = Plan.for_size(messages)
    writer = Writer()
    made = Made()
    User = get_user_model()
    start = datetime.now(UTC) - YEAR

    def text(low: int, high: int) -> str:
        return " ".join(rng.choices(words, weights, k=rng.randint(low, high))).capitalize() + "."

    with transaction.atomic():
        people = [User(id=n, username=f"person{n}", password="!", is_active=True) for n in range(1, plan.people + 1)]
        people.append(User(id=plan.people + 1, username="admin", password="!", is_staff=True, is_superuser=True))
        for person in people:
            person.date_joined = start
            writer.add(person)
        writer.flush()
        made.heavy_user, made.other_user = 1, 2
        ids = {"message": 0, "run": 0, "usage": 0}

        def next_id(kind: str) -> int:
            ids[kind] += 1
            return ids[kind]

        def chat(owner: int, length: int, when: datetime, marker: bool = False) -> str:
            thread = Thread(id=uuid.uuid4(), owner_id=owner, title=text(2, 5)[:200], created_at=when)
            thread.updated_at = when
            writer.add(thread)
            order = 0
            step = timedelta(seconds=30)
            written = 0
            turn = 0
            before = None  # the branch's last message: a question's parent, as the app sets it (versions)
            while written < length:
                turn += 1
                run = Run(id=next_id("run"), thread_id=thread.id, status="completed", steps=1, model_label="bench")
                run.started_at = run.finished_at = when
                writer.add(run)
                order += 1
                body = text(4, 40)
                if marker and turn == 1:
                    body = f"{MARKER} {body}"
                asked = Message(id=next_id("message"), thread_id=thread.id, run_id=run.id, order=order, role="user")
                asked.content, asked.created_at, asked.updated_at = body, when, when
                asked.parent_id = before
                if turn % 50 == 0:  # an older version of this question, edited since: hidden with its answer
                    old = Message(id=next_id("message"), thread_id=thread.id, order=order, role="user", active=False)
                    old.content, old.created_at, old.updated_at = text(4, 40), when, when
                    old.hidden_under, old.parent_id = old.id, before
                    older = Message(id=next_id("message"), thread_id=thread.id, order=order + 1, role="assistant")
                    older.content, older.created_at, older.updated_at = text(20, 120), when, when
                    older.active, older.hidden_under, older.parent_id = False, old.id, old.id
                    writer.add(old)
                    writer.add(older)
                    written += 2
                writer.add(asked)
                if turn % 20 == 0:
                    writer.add(
                        Attachment(
                            id=uuid.uuid4(),
                            owner_id=owner,
                            thread_id=thread.id,
                            message_id=asked.id,
                            name="notes.txt",
                            content_type="text/plain",
                            kind="text",
                            size=2048,
                            path=f"attachments/bench/{asked.id}.txt",
                            text=text(50, 100),
                            created_at=when,
                        )
                    )
                written += 1
                calls = 2 if turn % 5 == 0 else 1
                for call in range(calls):
                    when += step
                    order += 1
                    last = call == calls - 1
                    answer = Message(id=next_id("message"), thread_id=thread.id, run_id=run.id, order=order)
                    answer.role, answer.created_at, answer.updated_at = "assistant", when, when
                    answer.parent_id = asked.id if call == 0 else None
                    answer.content = text(20, 120) if last else ""
                    answer.usage = {"input_tokens": 800 + 40 * order, "output_tokens": 200}
                    writer.add(answer)
                    before = answer.id
                    writer.add(
                        Usage(
                            id=next_id("usage"),
                            user_id=owner,
                            thread_id=thread.id,
                            run_id=run.id,
                            model_label="bench",
                            input_tokens=800 + 40 * order,
                            output_tokens=200,
                            created_at=when,
                        )
                    )
                    written += 1
                    if not last:
                        call_id = f"call_{answer.id}"
                        writer.add(
                            ToolCall(
                                id=uuid.uuid4(),
                                message_id=answer.id,
                                call_id=call_id,
                                name="calculator",
                                args={"expression": "6*7"},
                                status="success",
                                result="42",
                                created_at=when,
                            )
                        )
                        order += 1
                        result = Message(id=next_id("message"), thread_id=thread.id, order=order, role="tool")
                        result.tool_call_id, result.name, result.content = call_id, "calculator", "42"
                        result.created_at = result.updated_at = when
                        writer.add(result)
                        written += 1
            thread.updated_at = when
            thread.has_versions = turn >= 50
            return str(thread.id)

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
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    made.counts = writer.counts
    return made
