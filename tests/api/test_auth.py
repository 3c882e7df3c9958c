"""Who a program's request is: `Authorization: Bearer <key>` and nothing else. A page's session cookie never stands in
for a key; a wrong scheme, an unknown, revoked or expired key, or a deactivated person's, is refused with the reason."""

import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.test import Client, RequestFactory
from django.utils import timezone

from api.auth import KeyRefused, authenticate, bearer_key, caller_of, still_usable
from api.models import ApiKey
from chat.access import SignedOut
from chat.models import Source
from chat.runs.start import open_turn

pytestmark = pytest.mark.django_db


def request_as(session_of=None, **headers):
    """A request as Django's middleware hands it to a view: with the session cookie of `session_of`'s test client
    (so request.user is that person), and `headers`."""
    factory = RequestFactory()
    if session_of is not None:
        factory.cookies[settings.SESSION_COOKIE_NAME] = session_of.cookies[settings.SESSION_COOKIE_NAME].value
    request = factory.post("/v1/chat/completions", headers=headers)
    SessionMiddleware(lambda r: None).process_request(request)
    AuthenticationMiddleware(lambda r: None).process_request(request)
    return request


def refusal(request) -> str:
    with pytest.raises(KeyRefused) as refused:
        authenticate(request)
    return str(refused.value)


@pytest.fixture
def signed_in(owner):
    client = Client()
    client.force_login(owner)
    return client


def test_a_signed_in_browsers_cookie_is_not_a_key(owner, signed_in):
    request = request_as(signed_in)
    assert request.user == owner  # the session is good: it just is not what an API call is signed with
    assert "Authorization: Bearer" in refusal(request)


def test_a_key_is_its_person_and_its_use_is_noted(owner):
    row, key = ApiKey.issue(owner, "script")
    found = authenticate(request_as(Authorization=f"Bearer {key}"))
    assert found.pk == row.pk and found.user == owner
    assert ApiKey.objects.get(pk=row.pk).last_used_at is not None
    assert authenticate(request_as(Authorization=f"bearer   {key}  ")).pk == row.pk  # the scheme in any case


@pytest.mark.parametrize("header", ["Basic b3duZXI6cGFzcw==", "Token {key}", "{key}", "Bearer", "Bearer  "])
def test_any_other_scheme_is_refused(owner, header):
    _row, key = ApiKey.issue(owner, "script")
    request = request_as(Authorization=header.format(key=key))
    assert bearer_key(request) is None
    assert "Authorization: Bearer" in refusal(request)


def test_an_unknown_key_is_refused(owner, signed_in):
    _row, key = ApiKey.issue(owner, "script")
    assert refusal(request_as(Authorization="Bearer aw-not-a-key-at-all")) == "This API key is not valid."
    # A wrong key with a good session cookie beside it: still refused, the cookie is not looked at.
    forged = key[:-2] + ("zz" if not key.endswith("zz") else "yy")
    assert refusal(request_as(signed_in, Authorization=f"Bearer {forged}")) == "This API key is not valid."


def test_a_revoked_key_is_refused(owner):
    row, key = ApiKey.issue(owner, "script")
    row.revoke()
    assert "revoked" in refusal(request_as(Authorization=f"Bearer {key}"))
    assert ApiKey.objects.get(pk=row.pk).last_used_at is None  # a refused call is no use


def test_an_expired_key_is_refused(owner):
    row, key = ApiKey.issue(owner, "script", expires_in_days=1)
    ApiKey.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert "expired" in refusal(request_as(Authorization=f"Bearer {key}"))


def test_a_deactivated_persons_key_is_refused(owner):
    _row, key = ApiKey.issue(owner, "script")
    owner.is_active = False
    owner.save()
    assert "deactivated" in refusal(request_as(Authorization=f"Bearer {key}"))


def test_a_turn_opened_with_a_key_marks_its_thread_and_run_and_stops_once_the_key_is_revoked(owner):
    row, _key = ApiKey.issue(owner, "script")
    caller = caller_of(row)
    assert (caller.source, caller.api_key_id) == (Source.API, row.pk)
    assert still_usable(row.pk) == owner
    turn, _setup, _info = open_turn(
        user=owner,
        session_key=None,
        thread_id=None,
        content="hello",
        client_msg_id=uuid.uuid4(),
        model=None,
        caller=caller,
    )
    assert turn.thread.source == "api" and turn.thread.owner == owner
    assert (turn.run.source, turn.run.api_key_id) == ("api", row.pk)

    row.revoke()
    assert still_usable(row.pk) is None
    with pytest.raises(SignedOut):
        open_turn(
            user=owner,
            session_key=None,
            thread_id=str(turn.thread.pk),
            content="again",
            client_msg_id=uuid.uuid4(),
            model=None,
            caller=caller,
        )
