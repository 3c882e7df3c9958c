"""API keys on the settings page: made with a name and an optional expiry, the key shown on the one page that follows
and never again (not in the list, a later page, a redirect or a log line), revoked by its person only."""

import logging

import pytest
from django.test import Client

from api.auth import KeyRefused, authenticate
from api.keys import MAX_LIVE_KEYS
from api.models import ApiKey
from tests.api.test_auth import request_as

pytestmark = pytest.mark.django_db

SETTINGS = "/settings/"
CREATE = "/settings/api-keys/"


def login(user, **options) -> Client:
    client = Client(**options)
    client.force_login(user)
    return client


def revoke_url(row) -> str:
    return f"/settings/api-keys/{row.pk}/revoke/"


def make(client, name="my script", days=""):
    return client.post(CREATE, {"name": name, "expires_in_days": days})


def shown_key(response) -> str:
    page = response.content.decode()
    return page.split('id="api-key-value" type="text" readonly value="')[1].split('"')[0]


def test_a_key_made_on_the_settings_page_is_shown_once_and_works(owner):
    client = login(owner)
    page = client.get(SETTINGS).content.decode()
    assert 'id="api-keys"' in page and "You have no API keys." in page
    assert f'action="{CREATE}"' in page

    response = make(client, "notebook", "30")
    assert response.status_code == 201
    assert "no-store" in response["Cache-Control"] and response["Referrer-Policy"] == "no-referrer"
    key = shown_key(response)
    assert response.content.decode().count(key) == 1
    assert 'id="api-key-copy"' in response.content.decode()
    row = ApiKey.objects.get()
    assert (row.user, row.name, row.expires_at is not None) == (owner, "notebook", True)
    assert authenticate(request_as(Authorization=f"Bearer {key}")).user == owner

    listed = client.get(SETTINGS).content.decode()
    assert key not in listed and key[len("aw-") + 8 :] not in listed
    assert "notebook" in listed and row.shown in listed and "active" in listed and "last used" in listed


def test_the_list_says_each_keys_state_in_words(owner):
    ApiKey.issue(owner, "in use")
    revoked, _ = ApiKey.issue(owner, "revoked one")
    revoked.revoke()
    expired, _ = ApiKey.issue(owner, "old one", expires_in_days=1)
    ApiKey.objects.filter(pk=expired.pk).update(expires_at="2020-01-01T00:00Z")
    page = login(owner).get(SETTINGS).content.decode()
    items = page.split('id="api-key-list"')[1].split("</ul>")[0].split("<li ")[1:]
    states = {item.split('class="api-key-name">')[1].split("<")[0]: item for item in items}
    assert 'class="api-key-state">active<' in states["in use"] and "Revoke" in states["in use"]
    assert 'class="api-key-state">revoked<' in states["revoked one"] and "Revoke" not in states["revoked one"]
    assert 'class="api-key-state">expired<' in states["old one"] and "does not expire" not in states["old one"]
    assert "never used" in states["in use"]


@pytest.mark.parametrize(
    ("name", "days"),
    [("", ""), ("   ", ""), ("x" * 101, ""), ("ok", "0"), ("ok", "3651"), ("ok", "-5"), ("ok", "ten")],
)
def test_a_bad_name_or_expiry_makes_no_key(owner, name, days):
    response = make(login(owner), name, days)
    assert response.status_code == 400
    assert 'class="field-error"' in response.content.decode()
    assert 'id="api-key-value"' not in response.content.decode()
    assert not ApiKey.objects.exists()


def test_the_bounds_of_expiry_are_allowed(owner):
    client = login(owner)
    assert make(client, "a day", "1").status_code == 201
    assert make(client, "ten years", "3650").status_code == 201


def test_a_person_may_have_so_many_keys_in_use(owner):
    for n in range(MAX_LIVE_KEYS):
        ApiKey.issue(owner, f"key {n}")
    response = make(login(owner), "one more")
    assert response.status_code == 400 and "revoke one first" in response.content.decode()
    assert ApiKey.objects.count() == MAX_LIVE_KEYS
    ApiKey.objects.first().revoke()
    assert make(login(owner), "one more").status_code == 201


def test_a_key_is_revoked_by_its_person_and_stops_working(owner):
    row, key = ApiKey.issue(owner, "laptop")
    client = login(owner)
    assert f'action="{revoke_url(row)}"' in client.get(SETTINGS).content.decode()
    response = client.post(revoke_url(row))
    assert response.status_code == 302 and response["Location"] == "/settings/#api-keys"
    assert ApiKey.objects.get(pk=row.pk).revoked_at is not None
    page = client.get(SETTINGS).content.decode()
    assert "is revoked" in page and 'class="api-key-state">revoked<' in page
    with pytest.raises(KeyRefused, match="revoked"):
        authenticate(request_as(Authorization=f"Bearer {key}"))


def test_the_revoke_address_asks_first_without_javascript(owner):
    row, _ = ApiKey.issue(owner, "laptop")
    page = login(owner).get(revoke_url(row)).content.decode()
    assert "Revoke this key?" in page and row.shown in page
    assert ApiKey.objects.get(pk=row.pk).revoked_at is None


def test_a_stranger_neither_sees_nor_revokes_anothers_key(owner, stranger):
    row, _ = ApiKey.issue(owner, "owner's laptop")
    client = login(stranger)
    assert "owner&#x27;s laptop" not in client.get(SETTINGS).content.decode()
    assert row.shown not in client.get(SETTINGS).content.decode()
    assert client.post(revoke_url(row)).status_code == 404
    assert client.get(revoke_url(row)).status_code == 404
    assert client.post("/settings/api-keys/999999/revoke/").status_code == 404
    assert ApiKey.objects.get(pk=row.pk).revoked_at is None


def test_without_signing_in_nothing_is_made_or_revoked(owner):
    row, _ = ApiKey.issue(owner, "laptop")
    anonymous = Client()
    assert anonymous.post(CREATE, {"name": "x"}).status_code == 302
    assert anonymous.post(revoke_url(row)).status_code == 302
    assert ApiKey.objects.count() == 1 and ApiKey.objects.get().revoked_at is None


def test_making_and_revoking_need_the_csrf_token(owner):
    row, _ = ApiKey.issue(owner, "laptop")
    client = login(owner, enforce_csrf_checks=True)
    assert make(client, "forged").status_code == 403
    assert client.post(revoke_url(row)).status_code == 403
    assert ApiKey.objects.count() == 1 and ApiKey.objects.get().revoked_at is None


def test_making_a_key_is_a_post(owner):
    assert login(owner).get(CREATE).status_code == 405


def test_no_log_line_carries_the_key(owner, caplog):
    caplog.set_level(logging.DEBUG)
    client = login(owner)
    response = make(client, "logged?")
    key = shown_key(response)
    client.get(SETTINGS)
    authenticate(request_as(Authorization=f"Bearer {key}"))
    client.post(revoke_url(ApiKey.objects.get()))
    with pytest.raises(KeyRefused, match="revoked"):
        authenticate(request_as(Authorization=f"Bearer {key}"))
    for record in caplog.records:
        assert key not in record.getMessage() and key not in str(record.args)
    assert key not in caplog.text


def test_what_is_wrong_is_said_next_to_its_field_in_words(owner):
    client = login(owner)
    assert "Give the key a name" in make(client, "", "").content.decode()
    page = make(client, "ok", "4000").content.decode()
    assert "1 to 3650 days" in page and 'aria-invalid="true"' in page
    assert 'value="ok"' in page  # what was typed is kept
    assert "novalidate" in client.get(SETTINGS).content.decode()  # the page says it, not the browser's bubble
