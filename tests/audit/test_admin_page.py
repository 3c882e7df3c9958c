"""The audit page: filterable and searchable, and read-only for everyone: no add, change or delete, superusers
included; staff see it only with the view permission, other people not at all."""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

import audit
from audit.models import Event

pytestmark = pytest.mark.django_db

LIST = "/admin/audit/event/"


@pytest.fixture
def logged(owner, stranger):
    audit.record(audit.Action.SIGNIN, actor=owner, target=owner, ip="203.0.113.1")
    audit.record(audit.Action.SIGNIN_FAILED, target=audit.Target("user", "", "mallory"), ip="203.0.113.2")
    audit.record(audit.Action.SHARE_LINK_CREATED, actor=stranger, target=audit.Target("sharing.sharelink", "9", "x"))
    return Event.objects.order_by("id")


def test_the_list_filters_by_action_and_actor_and_searches(as_superuser, logged, owner):
    page = as_superuser.get(LIST).content.decode()
    assert "mallory" in page and "203.0.113.1" in page
    failed = as_superuser.get(LIST, {"action__exact": "signin.failed"}).content.decode()
    assert "mallory" in failed and "203.0.113.1" not in failed
    by_owner = as_superuser.get(LIST, {"actor__id__exact": owner.pk}).content.decode()
    assert "203.0.113.1" in by_owner and "mallory" not in by_owner
    assert "mallory" in as_superuser.get(LIST, {"q": "mallo"}).content.decode()
    assert "Export CSV" in page and "Export JSON" in page


def test_nothing_can_be_added_changed_or_deleted_even_by_a_superuser(as_superuser, logged):
    event, before = logged.first(), logged.count()
    assert as_superuser.get(f"{LIST}add/").status_code == 403
    detail = as_superuser.get(f"{LIST}{event.pk}/change/")
    assert detail.status_code == 200 and 'type="submit"' not in detail.content.decode().split("<form")[-1]
    assert as_superuser.post(f"{LIST}{event.pk}/change/", {"actor_name": "nobody"}).status_code == 403
    assert as_superuser.post(f"{LIST}{event.pk}/delete/", {"post": "yes"}).status_code == 403
    as_superuser.post(LIST, {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"})
    assert Event.objects.filter(pk=event.pk, actor_name=event.actor_name).exists()
    assert Event.objects.count() == before


def test_staff_see_it_only_with_the_view_permission(staff, logged):
    client = Client()
    client.force_login(staff)
    before = logged.count()
    assert client.get(LIST).status_code == 403
    staff.user_permissions.add(Permission.objects.get(codename="view_event", content_type__app_label="audit"))
    assert client.get(LIST).status_code == 200
    staff.user_permissions.add(
        *Permission.objects.filter(
            codename__in=["change_event", "delete_event", "add_event"], content_type__app_label="audit"
        )
    )
    assert client.post(f"{LIST}{logged.first().pk}/delete/", {"post": "yes"}).status_code == 403
    assert Event.objects.count() == before


def test_a_person_who_is_not_staff_is_sent_to_the_admins_login(as_owner, logged):
    response = as_owner.get(LIST)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
