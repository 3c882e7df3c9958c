"""API keys made and revoked, by each way there is (the settings page, the admin, `manage.py apikeys`), recorded
with who did it and whose key it is; the key itself and its hash never reach the log."""

import io

import pytest
from django.core.management import call_command
from django.test import Client

from api.models import ApiKey
from tests.audit.conftest import events, everything_recorded

pytestmark = pytest.mark.django_db


def shown_key(response) -> str:
    page = response.content.decode()
    return page.split('id="api-key-value" type="text" readonly value="')[1].split('"')[0]


def test_a_key_made_and_revoked_on_the_settings_page(owner):
    client = Client(REMOTE_ADDR="192.0.2.10")
    client.force_login(owner)
    response = client.post("/settings/api-keys/", {"name": "my script", "expires_in_days": "30"})
    key = shown_key(response)
    row = ApiKey.objects.get()
    [made] = events("api_key.created")
    assert (made.actor, made.ip, made.target_type, made.target_id) == (owner, "192.0.2.10", "api.apikey", str(row.pk))
    assert made.target_label == f"my script ({row.shown})"
    assert made.detail["owner"] == "owner" and made.detail["via"] == "settings" and made.detail["expires_at"]

    client.post(f"/settings/api-keys/{row.pk}/revoke/")
    [revoked] = events("api_key.revoked")
    assert (revoked.actor, revoked.target_id, revoked.detail["via"]) == (owner, str(row.pk), "settings")
    text = everything_recorded()
    assert key not in text and row.hashed not in text


def test_a_refused_key_is_not_recorded(owner):
    client = Client()
    client.force_login(owner)
    client.post("/settings/api-keys/", {"name": "", "expires_in_days": "99999"})
    assert not events("api_key.created")


def test_revoking_a_revoked_key_again_records_nothing_more(owner):
    client = Client()
    client.force_login(owner)
    row, _ = ApiKey.issue(owner, "gone")
    client.post(f"/settings/api-keys/{row.pk}/revoke/")
    client.post(f"/settings/api-keys/{row.pk}/revoke/")
    assert len(events("api_key.revoked")) == 1


def test_keys_made_and_revoked_in_the_admin_are_the_admins(as_superuser, superuser, owner, stranger):
    response = as_superuser.post("/admin/api/apikey/add/", {"user": owner.pk, "name": "for owner"})
    assert response.status_code == 200  # the page that shows the key once
    [made] = events("api_key.created")
    assert (made.actor, made.detail["owner"], made.detail["via"]) == (superuser, "owner", "admin")
    theirs, _ = ApiKey.issue(stranger, "theirs")
    mine = ApiKey.objects.get(name="for owner")
    as_superuser.post("/admin/api/apikey/", {"action": "revoke_selected", "_selected_action": [mine.pk, theirs.pk]})
    revoked = events("api_key.revoked")
    assert sorted(e.detail["owner"] for e in revoked) == ["owner", "stranger"]
    assert {e.actor for e in revoked} == {superuser}


def test_keys_made_and_revoked_by_the_command_have_no_actor(owner):
    out = io.StringIO()
    call_command("apikeys", "create", "owner", "--name", "cron", stdout=out, stderr=io.StringIO())
    key = out.getvalue().strip()
    call_command("apikeys", "revoke", "owner", "--name", "cron", stderr=io.StringIO())
    made, revoked = events("api_key.created") + events("api_key.revoked")
    assert (made.actor, made.actor_name, made.detail["via"]) == (None, "", "command")
    assert (revoked.actor, revoked.detail["via"], revoked.detail["owner"]) == (None, "command", "owner")
    assert key not in everything_recorded()
