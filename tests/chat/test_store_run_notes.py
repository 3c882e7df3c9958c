"""A run's notes (chat/store/steps.py add_run_note): each kept, in the order said; the first written in one
statement, as every turn of a chat longer than its model's window writes one (bench/data: a turn there was 21
statements against 17). Runs on SQLite by default and on PostgreSQL with DATABASE_URL=postgres://…/agentweb."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chat import store
from chat.models import Run, Thread

pytestmark = pytest.mark.django_db


def test_a_runs_notes_are_kept_in_order_and_the_first_costs_one_statement(owner):
    run = Run.objects.create(thread=Thread.objects.create(owner=owner, title="t"))
    other = Run.objects.create(thread=Thread.objects.create(owner=owner, title="u"))
    with CaptureQueriesContext(connection) as first:
        store.add_run_note(run_id=run.pk, text="The oldest 4 messages were left out.")
    store.add_run_note(run_id=run.pk, text="A second note.")
    run.refresh_from_db()
    other.refresh_from_db()
    assert len(first) == 1
    assert run.notes == ["The oldest 4 messages were left out.", "A second note."]
    assert other.notes == []
