"""API keys in the admin, as a superuser sees them: listed with their person and use, never their hash; revoked in
bulk; made for a person with the key shown on the one page that follows, never again. The usage report says which
calls came through the API, and with which key."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from api.models import ApiKey
from chat.models import Usage

pytestmark = pytest.mark.django_db

LIST = "/admin/api/apikey/"
ADD = "/admin/api/apikey/add/"


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("boss", password="boss-password-1"))
    return client


def test_the_list_shows_each_key_and_its_person_but_never_its_hash(admin_client, owner):
    row, key = ApiKey.issue(owner, "notebook", expires_in_days=7)
    row.note_use()
    page = admin_client.get(LIST).content.decode()
    assert "notebook" in page and "owner" in page and row.shown in page
    for column in ("created", "expires", "last used", "revoked"):
        assert column in page.lower()
    assert row.hashed not in page and key not in page
    change = admin_client.get(f"{LIST}{row.pk}/change/").content.decode()
    assert row.shown in change and row.hashed not in change and key not in change
    assert 'name="hashed"' not in change and 'name="lookup"' not in change


def test_the_state_filter(admin_client, owner):
    ApiKey.issue(owner, "in use")
    gone, _ = ApiKey.issue(owner, "gone")
    gone.revoke()
    assert "in use" in admin_client.get(f"{LIST}?state=active").content.decode()
    assert "gone" not in admin_client.get(f"{LIST}?state=active").content.decode()
    assert "gone" in admin_client.get(f"{LIST}?state=revoked").content.decode()


def test_revoke_selected_keys(admin_client, owner, stranger):
    mine, _ = ApiKey.issue(owner, "one")
    theirs, _ = ApiKey.issue(stranger, "two")
    kept, _ = ApiKey.issue(owner, "three")
    response = admin_client.post(
        LIST, {"action": "revoke_selected", "_selected_action": [mine.pk, theirs.pk]}, follow=True
    )
    assert "Revoked 2 key(s)" in response.content.decode()
    assert ApiKey.objects.get(pk=mine.pk).revoked_at and ApiKey.objects.get(pk=theirs.pk).revoked_at
    assert ApiKey.objects.get(pk=kept.pk).revoked_at is None


def test_an_admin_makes_a_key_for_a_person_shown_once(admin_client, owner):
    form = admin_client.get(ADD).content.decode()
    assert 'name="user"' in form and 'name="name"' in form and 'name="expires_in_days"' in form
    assert 'name="hashed"' not in form
    response = admin_client.post(ADD, {"user": owner.pk, "name": "for owner", "expires_in_days": "90"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    page = response.content.decode()
    key = re.search(r'id="api-key-value"[^>]* value="([^"]+)"', page).group(1)
    row = ApiKey.objects.get()
    assert (row.user, row.name) == (owner, "for owner") and row.expires_at is not None
    assert ApiKey.matching(key) == row
    # Never again: not in the list, the key's page, or the history of the change.
    for later in (LIST, f"{LIST}{row.pk}/change/", f"{LIST}{row.pk}/history/"):
        assert key not in admin_client.get(later).content.decode()
    assert "messages" not in response.cookies  # not kept in a message either


@pytest.mark.parametrize("days", ["0", "3651"])
def test_the_admin_refuses_an_expiry_out_of_bounds(admin_client, owner, days):
    response = admin_client.post(ADD, {"user": owner.pk, "name": "x", "expires_in_days": days})
    assert response.status_code == 200 and "errornote" in response.content.decode()
    assert not ApiKey.objects.exists()


def test_the_admin_cannot_give_a_deactivated_person_a_key(admin_client, owner):
    owner.is_active = False
    owner.save()
    admin_client.post(ADD, {"user": owner.pk, "name": "x"})
    assert not ApiKey.objects.exists()


def test_changing_a_key_changes_its_name_not_its_secret(admin_client, owner):
    row, key = ApiKey.issue(owner, "old name")
    response = admin_client.post(
        f"{LIST}{row.pk}/change/", {"name": "new name", "expires_at_0": "", "expires_at_1": "", "hashed": "x" * 64}
    )
    assert response.status_code == 302
    stored = ApiKey.objects.get(pk=row.pk)
    assert stored.name == "new name" and stored.hashed == row.hashed and ApiKey.matching(key) == stored


def test_the_usage_report_shows_the_source_and_the_key(admin_client, owner):
    row, _ = ApiKey.issue(owner, "cron job")
    Usage.objects.create(user=owner, model_label="Qwen", input_tokens=1, output_tokens=1, source="api", api_key=row)
    Usage.objects.create(user=owner, model_label="Qwen", input_tokens=2, output_tokens=2)
    page = admin_client.get("/admin/chat/usage/").content.decode()
    rows = page.split('id="result_list"')[1]
    assert "column-via" in rows  # the source, and the key's name where it was the API
    assert f"api · {row}" in rows.replace("&#x27;", "'").replace("&amp;", "&")
    filtered = admin_client.get("/admin/chat/usage/?source__exact=api").content.decode()
    assert filtered.split('id="result_list"')[1].count("<tr") == 2  # its head and the one API row
    by_key = admin_client.get(f"/admin/chat/usage/?api_key__id__exact={row.pk}").content.decode()
    assert by_key.split('id="result_list"')[1].count("<tr") == 2
