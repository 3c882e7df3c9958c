"""The sidebar of a person with many chats (issue 42, migration 0024): its two lists are read through their own
index, in their order, as far as they show; no statement reads all the person's chats to sort them. On SQLite by
default, on PostgreSQL with DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentweb."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from chat.models import Thread
from chat.store import list_archived_threads, list_threads, sidebar_threads

pytestmark = pytest.mark.django_db


def plan(sql: str) -> str:
    with connection.cursor() as db:
        if connection.vendor == "postgresql":
            db.execute("SET enable_seqscan = off")  # a few rows: priced out, so only a missing index shows a scan
            db.execute("EXPLAIN " + sql)
            rows = [row[0] for row in db.fetchall()]
            db.execute("RESET enable_seqscan")
        else:
            db.execute("EXPLAIN QUERY PLAN " + sql)
            rows = [row[-1] for row in db.fetchall()]
    return "\n".join(rows)


@pytest.fixture
def chats(owner, stranger):
    now = timezone.now()
    made = [Thread(owner=user, title=f"chat {n}") for user in (owner, stranger) for n in range(30)]
    Thread.objects.bulk_create(made)
    for n, thread in enumerate(made):  # activity one minute apart; some pinned, some archived
        fields = {"updated_at": now - timedelta(minutes=n)}
        if n % 10 == 3:
            fields["pinned_at"] = now - timedelta(hours=n)
        if n % 10 == 7:
            fields["archived_at"] = now - timedelta(days=n)
        Thread.objects.filter(pk=thread.pk).update(**fields)
    return made


@pytest.mark.parametrize(
    ("read", "index"), [(list_threads, "thread_sidebar"), (list_archived_threads, "thread_archived")]
)
def test_each_sidebar_list_is_read_through_its_index_in_its_order(owner, chats, read, index):
    with CaptureQueriesContext(connection) as done:
        shown = read(user=owner)
    assert shown and all(t.owner_id == owner.pk for t in Thread.objects.filter(pk__in=[t.pk for t in shown]))
    (query,) = done.captured_queries
    steps = plan(query["sql"])
    assert index in steps, steps
    assert "Sort" not in steps and "TEMP B-TREE" not in steps, steps  # read in order, not sorted after


def test_pinned_chats_come_first_newest_pin_first_then_the_rest_by_activity(owner, chats):
    mine = [Thread.objects.get(pk=t.pk) for t in chats[:30]]
    pinned = sorted((t for t in mine if t.pinned_at and not t.archived_at), key=lambda t: t.pinned_at, reverse=True)
    rest = sorted((t for t in mine if not t.pinned_at and not t.archived_at), key=lambda t: t.updated_at, reverse=True)
    assert [t.pk for t in list_threads(user=owner)] == [t.pk for t in pinned + rest]
    archived = sorted((t for t in mine if t.archived_at), key=lambda t: t.archived_at, reverse=True)
    assert [t.pk for t in list_archived_threads(user=owner)] == [t.pk for t in archived]


def test_a_page_reads_both_lists_as_they_are_read_alone_in_one_statement_on_postgresql(owner, chats):
    with CaptureQueriesContext(connection) as statements:
        listed, archived = sidebar_threads(user=owner)
    assert [t.pk for t in listed] == [t.pk for t in list_threads(user=owner)]
    assert [t.pk for t in archived] == [t.pk for t in list_archived_threads(user=owner)]
    assert listed and archived
    if connection.vendor == "postgresql":
        assert len(statements) == 1
        steps = plan(statements[0]["sql"])
        assert "thread_sidebar" in steps and "thread_archived" in steps, steps
        assert "Sort" not in steps, steps
