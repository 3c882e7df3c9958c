"""start_turn's check of the thread: one statement, with its owner."""

import uuid

import pytest

from chat.access import NotFound
from chat.models import Thread
from chat.store import turns

pytestmark = pytest.mark.django_db


def test_the_check_reads_the_thread_with_its_checks_in_one_statement(owner, django_assert_num_queries):
    thread = Thread.objects.create(owner=owner, title="t")
    with django_assert_num_queries(1):
        found = turns._thread_for_turn(owner, str(thread.pk), uuid.uuid4())
        assert found.owner == owner  # read with the thread: the run's tools are the owner's
    assert found.pk == thread.pk and not found.replayed and not found.last_order


def test_another_users_thread_is_not_found(owner, stranger):
    thread = Thread.objects.create(owner=stranger, title="t")
    with pytest.raises(NotFound):
        turns._thread_for_turn(owner, str(thread.pk), uuid.uuid4())
