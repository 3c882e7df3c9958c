"""start_turn's check of the thread: one statement that also reads what prepare_run needs besides the history."""

import uuid

import pytest
from django.contrib.auth.models import Group

from chat import services
from chat.access import NotFound
from chat.models import Thread, ThreadToolGrant

pytestmark = pytest.mark.django_db


def test_the_check_reads_the_threads_grants_the_users_groups_and_the_stamp(owner, django_assert_num_queries):
    thread = Thread.objects.create(owner=owner, title="t")
    for name in ("calculator", "http_get"):
        ThreadToolGrant.objects.create(thread=thread, tool_name=name)
    for name in ("staff", "beta"):
        owner.groups.add(Group.objects.create(name=name))
    with django_assert_num_queries(1):
        found = services._thread_for_turn(owner, str(thread.pk), uuid.uuid4())
    assert found.pk == thread.pk and not found.replayed and not found.has_active_run and not found.last_order
    assert found.run_reads == services.grants_groups_and_stamp(thread_id=thread.pk, user_id=owner.pk)
    assert found.run_reads[:2] == ({"calculator", "http_get"}, frozenset({"staff", "beta"}))


def test_another_users_thread_is_not_found(owner, stranger):
    thread = Thread.objects.create(owner=stranger, title="t")
    with pytest.raises(NotFound):
        services._thread_for_turn(owner, str(thread.pk), uuid.uuid4())
