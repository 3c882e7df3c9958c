"""Sign-ins, failed sign-ins and sign-outs through the login page, recorded with the address they came from; the
password never reaches the log."""

import pytest
from django.test import Client
from django.urls import reverse

from audit.models import Event
from tests.audit.conftest import events, everything_recorded

pytestmark = pytest.mark.django_db


def test_a_sign_in_on_the_login_page_is_recorded_with_who_and_where_from(owner):
    client = Client(REMOTE_ADDR="203.0.113.7")
    response = client.post(reverse("login"), {"username": "owner", "password": "owner-password-1"})
    assert response.status_code == 302
    [event] = events("signin")
    assert (event.actor, event.actor_name, event.ip) == (owner, "owner", "203.0.113.7")
    assert (event.target_type, event.target_id) == ("auth.user", str(owner.pk))
    assert event.detail == {"backend": "django.contrib.auth.backends.ModelBackend"}


def test_a_wrong_password_is_recorded_with_the_username_tried_and_never_the_password(owner):
    client = Client(REMOTE_ADDR="198.51.100.4")
    response = client.post(reverse("login"), {"username": "owner", "password": "hunter2-not-it"})
    assert response.status_code == 200  # the form again, saying why: the attempt is refused as before
    [event] = events("signin.failed")
    assert (event.actor, event.target_label, event.ip) == (None, "owner", "198.51.100.4")
    assert "hunter2-not-it" not in everything_recorded()
    assert not events("signin")


def test_a_username_nobody_has_is_recorded_as_tried(db):
    Client().post(reverse("login"), {"username": "mallory", "password": "guess-1"})
    assert [e.target_label for e in events("signin.failed")] == ["mallory"]


def test_signing_out_is_recorded(owner):
    client = Client()
    client.post(reverse("login"), {"username": "owner", "password": "owner-password-1"})
    client.post(reverse("logout"))
    [event] = events("signout")
    assert (event.actor, event.ip) == (owner, "127.0.0.1")


def test_signing_out_goes_through_when_its_event_cannot_be_written(owner, monkeypatch, caplog):
    """Fail open: a sign-out the log cannot record still ends the session (refusing it would keep access)."""
    client = Client()
    client.force_login(owner)
    from django.db import DatabaseError

    def broken(self, *args, **kwargs):
        raise DatabaseError("the audit table is unwritable")

    monkeypatch.setattr(Event, "save", broken)
    client.post(reverse("logout"))
    assert client.get(reverse("chat:settings")).status_code == 302  # signed out: sent to the login page
    assert "signout event could not be written" in caplog.text


def test_a_sign_in_whose_event_cannot_be_written_signs_nobody_in(owner, monkeypatch):
    """Fail closed: no session without its row."""
    from django.db import DatabaseError

    def broken(self, *args, **kwargs):
        raise DatabaseError("the audit table is unwritable")

    monkeypatch.setattr(Event, "save", broken)
    client = Client(raise_request_exception=False)
    response = client.post(reverse("login"), {"username": "owner", "password": "owner-password-1"})
    assert response.status_code == 500
    assert client.get(reverse("chat:settings")).status_code == 302
