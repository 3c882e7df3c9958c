"""Search a person's own messages with the database's full-text index: PostgreSQL's tsvector (a GIN index on an
expression keyed by person and word, chat/migrations/0025), SQLite's FTS5 (a table kept in step by triggers, 0021).
One interface, `search_messages`, serves the sidebar (chat/thread_views.py) and the search_threads tool
(chat/runs/execute.py).

What is typed is never query syntax: it is cut into words (letters and digits; everything else separates them,
as both indexes' tokenizers do), at most MAX_TERMS of at most MAX_TERM_CHARS each, every one quoted; all must
occur, and the last one may be the start of a word (people search as they type). Text without a word finds
nothing. Every version of a message is searched, shown or not, and each hit says which version it is.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Q

from ..models import Message

MAX_TERMS = 8
MAX_TERM_CHARS = 64
MAX_QUERY_CHARS = 1000
MAX_LIMIT = 50
# The sidebar's search reads at most this many of the newest matches to find the threads they are in.
MATCH_SCAN = 1000
ROLES = (Message.Role.USER, Message.Role.ASSISTANT)
# The same expression as the index's (chat/migrations/0025), or PostgreSQL does not use it.
POSTGRES_DOCUMENT = "chat_message_search_document(m.owner_id, m.content)"
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Version:
    """Which version of its point a hit is (or, for a later message of a branch not shown, which version's branch
    holds it): `index` of `count` (1-based, in the order they were made)."""

    index: int
    count: int


@dataclass(frozen=True)
class Hit:
    message: int
    thread: str
    thread_title: str
    role: str
    content: str
    created_at: datetime
    # False: the message is on a branch the thread does not show now (an older version, or what followed it).
    shown: bool
    version: Version | None

    def as_dict(self) -> dict:
        found = {
            "message": self.message,
            "thread": self.thread,
            "thread_title": self.thread_title,
            "role": self.role,
            "content": self.content,
            "created_at": self.created_at.isoformat(),
            "shown": self.shown,
        }
        if self.version is not None:
            found["version"] = {"index": self.version.index, "count": self.version.count}
        return found


def search_terms(query: str) -> list[str]:
    """The words of `query`, lower-cased, bounded: what the index is asked for."""
    words = _WORD.findall(query[:MAX_QUERY_CHARS].lower())
    return [word[:MAX_TERM_CHARS] for word in words[:MAX_TERMS]]


def search_messages(*, user_id: int, query: str, limit: int = 20) -> list[Hit]:
    """The user's own user and assistant messages (every version) holding every word of `query`, newest first."""
    terms = search_terms(query)
    if not terms:
        return []
    where, params, newest = _matching(user_id, terms)
    sql = f"SELECT m.id FROM {where} ORDER BY {newest} LIMIT %s"
    return _hits(user_id, _column(sql, [*params, max(1, min(limit, MAX_LIMIT))]))


def search_threads(*, user_id: int, query: str, limit: int = MAX_LIMIT) -> dict[str, Hit]:
    """The user's threads with a matching message, the thread of the newest match first: {thread id: its newest
    matching message}."""
    terms = search_terms(query)
    if not terms:
        return {}
    where, params, newest = _matching(user_id, terms)
    # The newest MATCH_SCAN matches at most, each thread once (its newest): a word in half of a person's messages
    # must not cost a read of all of them (bench/data: 2.4 s on SQLite at 100k messages when every match was grouped).
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT m.id, m.thread_id FROM {where} ORDER BY {newest} LIMIT %s", [*params, MATCH_SCAN])
        newest_of: dict = {}
        for message_id, thread_id in cursor.fetchall():
            newest_of.setdefault(thread_id, message_id)
            if len(newest_of) >= max(1, min(limit, MAX_LIMIT)):
                break
    return {hit.thread: hit for hit in _hits(user_id, list(newest_of.values()))}


def _matching(user_id: int, terms: list[str]) -> tuple[str, list, str]:
    """FROM … WHERE … of the user's matching messages, as `m`, for this database, and its ORDER BY newest first
    (ids grow with time)."""
    if connection.vendor == "postgresql":
        # The index's keys are "<owner> <word>" (chat/migrations/0025): the person's id before each term, the last a
        # prefix (':*'). Terms hold letters and digits only, so quoting each is enough; lower() as the index's
        # 'simple' configuration lowers its words (the database's, which Python's may differ from past ASCII).
        owner = int(user_id)
        tsquery = " & ".join([*(f"'{owner} {t}'" for t in terms[:-1]), f"'{owner} {terms[-1]}':*"])
        where = f"""chat_message m JOIN chat_thread t ON t.id = m.thread_id
            WHERE t.owner_id = %s AND m.role IN ('user', 'assistant')
              AND {POSTGRES_DOCUMENT} @@ lower(%s)::tsquery"""
        # "+ 0": newest first, but not by walking the primary key backwards. PostgreSQL guesses a word's matches
        # from its statistics (a word outside them: about one message in fifty) and, with a LIMIT, prefers walking
        # every message from the newest, computing each one's document, until enough match: at 1M messages that
        # took 24-28 s for a rare word, a word in none, or a person whose messages are not the newest. Ordering by
        # an expression makes it read the matches from the full-text index and sort them: only the person's
        # matches, since the index is keyed by person (bench/data, docs/performance.md, "Fourth pass").
        return where, [user_id, tsquery], "m.id + 0 DESC"
    if connection.vendor == "sqlite":
        # FTS5: a double-quoted string is one term whatever it holds ("" inside is a quote); "…"* is a prefix.
        quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
        match = " ".join([*quoted[:-1], quoted[-1] + "*"])
        where = """chat_message_fts f JOIN chat_message m ON m.id = f.rowid JOIN chat_thread t ON t.id = m.thread_id
            WHERE chat_message_fts MATCH %s AND t.owner_id = %s"""
        # FTS5 reads its matches newest (largest rowid) first itself, so a LIMIT stops the reading early.
        return where, [match, user_id], "f.rowid DESC"
    raise NotImplementedError(f"No full-text search for {connection.vendor}.")  # pragma: no cover


def _column(sql: str, params: list) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def _hits(user_id: int, ids: list[int]) -> list[Hit]:
    if not ids:
        return []
    found = {
        m.pk: m for m in Message.all_versions.filter(pk__in=ids, thread__owner_id=user_id).select_related("thread")
    }
    messages = [found[pk] for pk in ids if pk in found]
    versions = _versions(messages)
    return [
        Hit(
            message=m.pk,
            thread=str(m.thread_id),
            thread_title=m.thread.title,
            role=m.role,
            content=m.content,
            created_at=m.created_at,
            shown=m.active,
            version=versions.get(m.pk),
        )
        for m in messages
    ]


def _versions(messages: list[Message]) -> dict[int, Version]:
    """For each message that is a version of its point, or lies on a hidden version's branch, which version that
    is; messages of the branch shown that are no version point get none. Two statements at most."""
    point_of = {}
    for m in messages:
        if not m.active and m.hidden_under is not None:  # the hidden version itself, or what followed it
            point_of[m.pk] = m.hidden_under
        elif m.is_version_point():
            point_of[m.pk] = m.pk
    if not point_of:
        return {}
    rows = Message.all_versions.filter(pk__in=set(point_of.values()))
    points = {p["pk"]: p for p in rows.values("pk", "thread_id", "parent_id", "role")}
    places = Q()
    for p in points.values():
        places |= Q(thread_id=p["thread_id"], parent_id=p["parent_id"], role=p["role"])
    siblings: dict[tuple, list[int]] = defaultdict(list)
    # The threads first, so the database reads their messages by its thread index, not every message for the ORs.
    threads = {p["thread_id"] for p in points.values()}
    kin = Message.all_versions.filter(thread_id__in=threads).filter(places)
    kin = kin.order_by("pk").values_list("pk", "thread_id", "parent_id", "role")
    for pk, thread_id, parent_id, role in kin:
        # A user message's versions share a parent; a run's first answers share the user message they answer.
        if role == Message.Role.USER or parent_id is not None:
            siblings[(thread_id, parent_id, role)].append(pk)
    found = {}
    for pk, point in point_of.items():
        p = points.get(point)
        ids = siblings.get((p["thread_id"], p["parent_id"], p["role"]), []) if p else []
        if point in ids and (len(ids) > 1 or pk != point):
            found[pk] = Version(ids.index(point) + 1, len(ids))
    return found
