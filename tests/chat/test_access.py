"""A socket's re-check of its session with the thread it subscribes to (chat/access.py)."""

import uuid

import pytest
from django.contrib.sessions.models import Session
from django.test import Client as DjangoClient

from chat.access import NotFound, SignedOut, current_user, signed_in_thread
from chat.models import Thread

pytestmark = pytest.mark.django_db


def session_key_of(user) -> str:
    """The session of a real login of `user`."""
    http = DjangoClient()
    http.force_login(user)
    return http.session.session_key


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner, title="t")


def test_the_session_and_the_thread_with_its_owner_are_two_statements(owner, thread, django_assert_num_queries):
    key = session_key_of(owner)
    with django_assert_num_queries(2):
        user, found = signed_in_thread(key, owner, str(thread.pk))
    assert (user, found) == (owner, thread)


def test_a_signed_in_user_is_told_another_users_thread_is_not_found(owner, stranger):
    theirs = Thread.objects.create(owner=stranger, title="t")
    with pytest.raises(NotFound):
        signed_in_thread(session_key_of(owner), owner, str(theirs.pk))


def test_a_signed_in_user_is_told_a_thread_that_never_was_is_not_found(owner):
    key = session_key_of(owner)
    for thread_id in (str(uuid.uuid4()), "not-a-uuid"):
        with pytest.raises(NotFound):
            signed_in_thread(key, owner, thread_id)


def test_an_ended_session_is_signed_out_though_the_thread_is_theirs(owner, thread):
    key = session_key_of(owner)
    Session.objects.all().delete()
    with pytest.raises(SignedOut):
        signed_in_thread(key, owner, str(thread.pk))


def test_a_changed_password_signs_the_session_out_though_the_thread_is_theirs(owner, thread):
    key = session_key_of(owner)
    owner.set_password("a-new-password-2")
    owner.save()
    with pytest.raises(SignedOut):
        signed_in_thread(key, owner, str(thread.pk))
    assert current_user(key) is None


def test_a_deactivated_account_is_signed_out_though_the_thread_is_theirs(owner, thread):
    key = session_key_of(owner)
    owner.is_active = False
    owner.save()
    with pytest.raises(SignedOut):
        signed_in_thread(key, owner, str(thread.pk))


def test_a_deactivated_account_is_signed_out_rather_than_told_a_thread_is_not_found(owner):
    key = session_key_of(owner)
    owner.is_active = False
    owner.save()
    with pytest.raises(SignedOut):
        signed_in_thread(key, owner, str(uuid.uuid4()))


def test_a_socket_of_one_user_is_signed_out_for_a_session_of_another(owner, stranger, thread):
    with pytest.raises(SignedOut):
        signed_in_thread(session_key_of(stranger), owner, str(thread.pk))
