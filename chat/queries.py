"""The statements written out in SQL, each with its ORM twin in tests/chat/test_queries.py (same results on SQLite
and PostgreSQL). Only where it is measured to matter: the ORM builds the same statement in milliseconds of CPU, on
the path of a turn's first model request (bench first-token; docs/performance.md)."""

from __future__ import annotations

import uuid
from functools import cache

from django.db import connection
from django.db.models.expressions import RawSQL

from tools.models import SettingsStamp

from .models import ChatDefaults, Message, Thread


@cache
def _thread_for_turn_sql(vendor: str) -> str:
    q = connection.ops.quote_name
    column = {name: q(Message._meta.get_field(name).column) for name in ("thread", "client_msg_id", "order", "active")}
    message, thread = q(Message._meta.db_table), q(Thread._meta.db_table)
    thread_pk, owner = q(Thread._meta.pk.column), q(Thread._meta.get_field("owner").column)
    stamp_table, stamp = q(SettingsStamp._meta.db_table), q(SettingsStamp._meta.get_field("stamp").column)
    message_pk = q(Message._meta.pk.column)
    # The branch shown: its last message's order and id (the new message follows it). `active` is compared with
    # TRUE, which SQLite (1) and PostgreSQL (a boolean) both take.
    shown = f"m.{column['thread']} = t.{thread_pk} AND m.{column['active']} = TRUE"
    return (
        f"SELECT t.*, "
        f"EXISTS(SELECT 1 FROM {message} m WHERE m.{column['thread']} = t.{thread_pk}"
        f" AND m.{column['client_msg_id']} = %s) AS replayed, "
        f"(SELECT MAX(m.{column['order']}) FROM {message} m WHERE {shown}) AS last_order, "
        f"(SELECT m.{message_pk} FROM {message} m WHERE {shown} ORDER BY m.{column['order']} DESC LIMIT 1)"
        f" AS last_message, "
        f"(SELECT s.{stamp} FROM {stamp_table} s WHERE s.{q(SettingsStamp._meta.pk.column)} = 1) AS stamp "
        f"FROM {thread} t WHERE t.{thread_pk} = %s AND t.{owner} = %s"
    )


def thread_for_turn(owner_id: int, thread_id: uuid.UUID, client_msg_id: uuid.UUID) -> Thread | None:
    """The owner's thread with what opening a turn on it reads: `replayed` (a message with `client_msg_id` is
    stored already, in any version), `last_order` and `last_message` (the order and id of the last message of the
    branch shown, None for none) and `stamp` (the tool settings' stamp, None when there is no row). None: no such
    thread of that owner.

    ORM twin: Thread.objects.filter(id=thread_id, owner_id=owner_id).annotate(replayed=Exists(all versions),
    last_order=Max-of-its-shown-messages Subquery, last_message=the last shown message's pk Subquery,
    stamp=Subquery(SettingsStamp pk=1))."""
    params = [
        Message._meta.get_field("client_msg_id").get_db_prep_value(client_msg_id, connection),
        Thread._meta.pk.get_db_prep_value(thread_id, connection),
        owner_id,
    ]
    thread = next(iter(Thread.objects.raw(_thread_for_turn_sql(connection.vendor), params)), None)
    if thread is not None:
        thread.replayed = bool(thread.replayed)  # SQLite says 0 or 1
    return thread


@cache
def _grants_groups_and_stamp_sql(vendor: str) -> str:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from .models import ThreadToolGrant

    q = connection.ops.quote_name
    groups = get_user_model()._meta.get_field("groups")
    member = q(groups.remote_field.through._meta.db_table)
    grant_thread = q(ThreadToolGrant._meta.get_field("thread").column)
    stamp_table, stamp = q(SettingsStamp._meta.db_table), q(SettingsStamp._meta.get_field("stamp").column)
    return (
        f"SELECT g.{q(ThreadToolGrant._meta.get_field('tool_name').column)}, 'g' FROM"
        f" {q(ThreadToolGrant._meta.db_table)} g WHERE g.{grant_thread} = %s "
        f"UNION ALL SELECT u.{q(Group._meta.get_field('name').column)}, 'u' FROM {q(Group._meta.db_table)} u"
        f" JOIN {member} ug ON ug.{q(groups.m2m_reverse_name())} = u.{q(Group._meta.pk.column)}"
        f" WHERE ug.{q(groups.m2m_column_name())} = %s "
        f"UNION ALL SELECT s.{stamp}, 's' FROM {stamp_table} s WHERE s.{q(SettingsStamp._meta.pk.column)} = 1"
    )


def grants_groups_and_stamp(thread_id: uuid.UUID, user_id: int) -> tuple[set[str], frozenset[str], str | None]:
    """What a run reads besides its history: the tools granted for the thread, the names of the user's groups,
    and the tool settings' stamp (None when there is no row).

    ORM twin: ThreadToolGrant tool names, Group names of the user, SettingsStamp pk=1, as one UNION ALL of
    values_list querysets, each marked with a Value."""
    params = [Thread._meta.pk.get_db_prep_value(thread_id, connection), user_id]
    with connection.cursor() as cursor:
        cursor.execute(_grants_groups_and_stamp_sql(connection.vendor), params)
        rows = cursor.fetchall()
    return (
        {value for value, which in rows if which == "g"},
        frozenset(value for value, which in rows if which == "u"),
        next((value for value, which in rows if which == "s"), None),
    )


@cache
def _stamp_and_defaults_sql(vendor: str) -> str:
    q = connection.ops.quote_name
    field = {name: q(ChatDefaults._meta.get_field(name).column) for name in ("user", "agent", "model")}
    stamp_table, stamp = q(SettingsStamp._meta.db_table), q(SettingsStamp._meta.get_field("stamp").column)
    return (
        f"SELECT s.{stamp}, d.{field['agent']}, d.{field['model']} FROM {stamp_table} s"
        f" LEFT JOIN {q(ChatDefaults._meta.db_table)} d ON d.{field['user']} = %s"
        f" WHERE s.{q(SettingsStamp._meta.pk.column)} = 1"
    )


def stamp_and_defaults(user_id: int) -> tuple[str | None, tuple[str, str] | None]:
    """What the empty chat's page reads first: the tool settings' stamp (None when there is no row) and the person's
    chat defaults (agent, model), None when they saved none — one statement, not two trips (docs/performance.md,
    issue 39: each trip of a page is a wait of its own on a busy machine).

    ORM twin: SettingsStamp pk=1's stamp and ChatDefaults of the user's agent and model, by two Subqueries."""
    with connection.cursor() as cursor:
        cursor.execute(_stamp_and_defaults_sql(connection.vendor), [user_id])
        row = cursor.fetchone()
    if row is None:  # no stamp's row (a database migrated only part of the way): the defaults alone
        found = ChatDefaults.objects.filter(user_id=user_id).values_list("agent", "model").first()
        return None, tuple(found) if found is not None else None
    stamp, agent, model = row
    return stamp, (agent, model) if agent is not None else None


def delete_rows(queryset) -> int:
    """DELETE the rows of `queryset` in one statement, reading none of them into Python; the number deleted. For a
    table whose rows others point at, the caller has dealt with those first (chat/store/deletion.py), and the model
    has no delete signal receivers (what Django's collector would load every row for: a thread's delete read its
    10,000 messages, runs and tool calls to delete them one batch of ids at a time).

    ORM twin: queryset.delete(), which gives the same rows gone (tests/chat/test_store_deletion.py compares a
    thread's delete both ways)."""
    model = queryset.model
    sql, params = queryset.order_by().values("pk").query.sql_with_params()
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {q(model._meta.db_table)} WHERE {q(model._meta.pk.column)} IN ({sql})", params)
        return cursor.rowcount


# Per process, by design: a memo of a pure function (the statement's text for one database vendor).
@cache
def _history_start_sql(vendor: str) -> str:
    q = connection.ops.quote_name
    column = {name: q(Message._meta.get_field(name).column) for name in ("thread", "order", "role", "status", "active")}
    content = q(Message._meta.get_field("content").column)
    # An answer that did not complete counts nothing: the history may leave it out (a failed or stopped answer a
    # retry replaces), and what is counted must be no more than what the model is sent.
    size = (
        f"CASE WHEN m.{column['role']} = 'assistant' AND m.{column['status']} <> 'complete' THEN 0"
        f" ELSE LENGTH(m.{content}) END"
    )
    return (
        f"SELECT COALESCE(MAX(t.o), 0) FROM (SELECT m.{column['order']} AS o, m.{column['role']} AS r,"
        f" SUM({size}) OVER (ORDER BY m.{column['order']} DESC) AS tail FROM {q(Message._meta.db_table)} m"
        f" WHERE m.{column['thread']} = %s AND m.{column['active']} = TRUE) t"
        f" WHERE t.r = 'user' AND t.tail > %s"
    )


def history_start(thread_id: uuid.UUID, chars: int) -> RawSQL:
    """The order the history a model is sent needs to start at, as a subquery: the newest user message of the branch
    shown from which its messages' text passes `chars` characters; 0 (all of it) when the whole branch holds fewer.
    Used as the history's filter (chat/store/snapshot.py), in its statement: no statement of its own.

    ORM twin: the largest `order` of the user messages of the branch whose Window(Sum(size), order_by=-order) is
    above `chars`, 0 for none (tests/chat/test_queries.py)."""
    return RawSQL(
        _history_start_sql(connection.vendor), [Thread._meta.pk.get_db_prep_value(thread_id, connection), chars]
    )
