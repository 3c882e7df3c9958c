"""Many sockets' sign-in reads in one trip (chat/signed_in.py): each gets what the one-socket read of chat/access.py
(or channels' get_user) gives it, with one query for the sessions and one for the threads or users of all."""

import asyncio
import uuid

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session

from chat.access import NotFound, SignedOut, signed_in_thread
from chat.models import Thread
from chat.signed_in import signed_in_threads, signed_in_users
from tests.chat.conftest import session_cookie
from tests.chat.test_access import session_key_of

pytestmark = pytest.mark.django_db


def one_at_a_time(key, user, thread_id):
    try:
        return signed_in_thread(key, user, thread_id)
    except (SignedOut, NotFound) as error:
        return error


def same(a, b) -> bool:
    return type(a) is type(b) if isinstance(a, Exception) else a == b


def test_subscribes_read_together_get_what_each_would_alone(owner, stranger, django_assert_max_num_queries):
    mine, theirs = Thread.objects.create(owner=owner, title="m"), Thread.objects.create(owner=stranger, title="t")
    my_key, their_key, ended_key = session_key_of(owner), session_key_of(stranger), session_key_of(owner)
    Session.objects.filter(session_key=ended_key).delete()  # logged out
    calls = [
        (my_key, owner, str(mine.pk)),
        (my_key, owner, str(theirs.pk)),  # another's thread
        (my_key, owner, str(uuid.uuid4())),  # never was
        (my_key, owner, "not-a-uuid"),
        (ended_key, owner, str(mine.pk)),
        (their_key, owner, str(mine.pk)),  # a session of someone else
        (None, owner, str(mine.pk)),
        (their_key, stranger, str(theirs.pk)),
    ]

    with django_assert_max_num_queries(3):
        together = signed_in_threads(calls)

    assert together[0] == (owner, mine) and together[-1] == (stranger, theirs)
    assert [type(r).__name__ for r in together[1:7]] == ["NotFound"] * 3 + ["SignedOut"] * 3
    assert all(same(a, one_at_a_time(*call)) for a, call in zip(together, calls, strict=True))


def test_a_changed_password_or_a_deactivated_account_signs_out_within_a_batch(owner, stranger):
    mine, theirs = Thread.objects.create(owner=owner, title="m"), Thread.objects.create(owner=stranger, title="t")
    my_key, their_key = session_key_of(owner), session_key_of(stranger)
    owner.set_password("a-new-password-2")
    owner.save()
    stranger.is_active = False
    stranger.save()

    together = signed_in_threads([(my_key, owner, str(mine.pk)), (their_key, stranger, str(theirs.pk))])

    assert [type(r) for r in together] == [SignedOut, SignedOut]


def test_sockets_opening_together_get_their_users_from_two_statements(owner, stranger, django_assert_max_num_queries):
    ended = session_key_of(owner)
    Session.objects.filter(session_key=ended).delete()
    sessions = [SessionStore(session_key_of(owner)), SessionStore(session_key_of(stranger)), SessionStore(ended)]
    sessions.append(SessionStore(None))

    with django_assert_max_num_queries(2):
        users = signed_in_users([(session,) for session in sessions])

    assert users[:2] == [owner, stranger]
    assert all(isinstance(user, AnonymousUser) for user in users[2:])


def test_a_session_whose_password_changed_is_anonymous_and_flushed_as_channels_does(owner, stranger):
    key = session_key_of(owner)
    owner.set_password("a-new-password-2")
    owner.save()

    users = signed_in_users([(SessionStore(key),), (SessionStore(session_key_of(stranger)),)])

    assert isinstance(users[0], AnonymousUser) and users[1] == stranger
    assert not Session.objects.filter(session_key=key).exists()


@pytest.mark.django_db(transaction=True)
async def test_many_tabs_subscribing_at_once_each_get_their_own_answer(connect, owner, stranger):
    thread = await database_sync_to_async(Thread.objects.create)(owner=owner, title="mine")
    tabs = [await connect(owner) for _ in range(6)] + [await connect(stranger)]

    await asyncio.gather(*(tab.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None) for tab in tabs))
    answers = await asyncio.gather(*(tab.receive() for tab in tabs))

    assert [a["type"] for a in answers[:6]] == ["thread.snapshot"] * 6
    assert {a["thread"] for a in answers[:6]} == {str(thread.pk)}
    assert answers[6]["type"] == "error" and answers[6]["code"] == "not_found"


@pytest.mark.django_db(transaction=True)
async def test_many_sockets_opening_at_once_are_each_signed_in_as_themselves(owner, stranger):
    from tests.chat.conftest import Client

    thread = await database_sync_to_async(Thread.objects.create)(owner=owner, title="mine")
    people = (owner, stranger, owner, stranger, owner)
    clients = [Client(await database_sync_to_async(session_cookie)(person)) for person in people]
    await asyncio.gather(*(client.connect() for client in clients))
    for client in clients:
        await client.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None)

    answers = [await client.receive() for client in clients]

    assert [a["type"] for a in answers] == ["thread.snapshot", "error", "thread.snapshot", "error", "thread.snapshot"]
    for client in clients:
        await client.close()
