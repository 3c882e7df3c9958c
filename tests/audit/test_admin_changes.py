"""Changes made in the admin, through the admin's own pages: each of Django's LogEntry rows becomes an event as it is
written (in the change's transaction), and the entries a bulk "Delete selected" writes without a signal are read in
when the audit page is opened."""

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model

from api.models import ApiKey
from audit.models import Event
from tests.audit.conftest import events

pytestmark = pytest.mark.django_db

KEYS = "/admin/api/apikey/"


def test_a_change_and_a_delete_in_the_admin_are_recorded_as_they_happen(as_superuser, superuser, owner):
    row, _ = ApiKey.issue(owner, "old name")
    response = as_superuser.post(
        f"{KEYS}{row.pk}/change/", {"name": "new name", "expires_at_0": "", "expires_at_1": ""}
    )
    assert response.status_code == 302
    [changed] = events("admin.changed")
    entry = LogEntry.objects.get(action_flag=2)
    assert (changed.actor, changed.target_type, changed.target_id) == (superuser, "api.apikey", str(row.pk))
    assert changed.admin_log_entry == entry.pk and changed.at == entry.action_time
    assert changed.detail == {"change": "Changed Name."}

    as_superuser.post(f"{KEYS}{row.pk}/delete/", {"post": "yes"})
    [deleted] = events("admin.deleted")
    assert (deleted.actor, deleted.target_label) == (superuser, f"new name ({row.shown})")


def test_a_person_made_in_the_admin_is_recorded(as_superuser, superuser):
    as_superuser.post(
        "/admin/auth/user/add/",
        {
            "username": "newcomer",
            "password1": "a-long-password-1",
            "password2": "a-long-password-1",
            "usable_password": "true",
        },
    )
    [added] = events("admin.added")
    assert (added.actor, added.target_type, added.target_label) == (superuser, "auth.user", "newcomer")
    assert "a-long-password-1" not in str(list(Event.objects.values()))


def test_a_bulk_delete_is_read_in_when_the_audit_page_opens(as_superuser, superuser, owner):
    first, _ = ApiKey.issue(owner, "first")
    second, _ = ApiKey.issue(owner, "second")
    as_superuser.post(KEYS, {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"})
    assert not ApiKey.objects.exists()
    assert LogEntry.objects.filter(action_flag=3).count() == 2
    assert not events("admin.deleted")  # bulk_create sends no signal
    page = as_superuser.get("/admin/audit/event/").content.decode()
    deleted = events("admin.deleted")
    assert sorted(e.target_id for e in deleted) == sorted([str(first.pk), str(second.pk)])
    assert {e.actor for e in deleted} == {superuser}
    assert "first" in page and "second" in page
    as_superuser.get("/admin/audit/event/")
    assert len(events("admin.deleted")) == 2  # read in once


def test_an_admins_events_outlive_their_account(as_superuser, superuser, owner):
    row, _ = ApiKey.issue(owner, "key")
    as_superuser.post(f"{KEYS}{row.pk}/change/", {"name": "renamed", "expires_at_0": "", "expires_at_1": ""})
    get_user_model().objects.filter(pk=superuser.pk).delete()  # their LogEntry rows go with them
    [changed] = events("admin.changed")
    assert (changed.actor, changed.actor_name) == (None, "root")
