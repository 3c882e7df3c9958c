"""Share links made and revoked by their owner on the pages, and revoked by an admin: recorded with who and the
thread; the link's token never reaches the log."""

import pytest
from django.urls import reverse

from sharing.models import ShareLink
from tests.audit.conftest import events, everything_recorded
from tests.sharing.conftest import thread  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_link_made_and_revoked_by_its_owner(as_owner, owner, thread):  # noqa: F811
    response = as_owner.post(
        reverse("sharing:create", args=[thread.id]), {"share_attachments": "on"}, HTTP_ACCEPT="application/json"
    )
    token = response.json()["url"].rstrip("/").rsplit("/", 1)[1]
    link = ShareLink.objects.get()
    [made] = events("share_link.created")
    assert (made.actor, made.target_type, made.target_id, made.ip) == (
        owner,
        "sharing.sharelink",
        str(link.pk),
        "127.0.0.1",
    )
    assert made.detail["thread"] == str(thread.id) and made.detail["share_attachments"] is True

    as_owner.post(reverse("sharing:revoke", args=[link.pk]))
    as_owner.post(reverse("sharing:revoke", args=[link.pk]))  # twice: revoked once
    [revoked] = events("share_link.revoked")
    assert (revoked.actor, revoked.target_id, revoked.detail["via"]) == (owner, str(link.pk), "page")
    text = everything_recorded()
    assert token not in text and link.token_hash not in text


def test_a_stranger_revoking_the_owners_link_is_refused_and_not_recorded(owner, stranger, thread):  # noqa: F811
    from django.test import Client

    from sharing import services

    link = services.create_link(thread=thread).link
    client = Client()
    client.force_login(stranger)
    assert client.post(reverse("sharing:revoke", args=[link.pk])).status_code == 404
    assert not events("share_link.revoked")


def test_a_link_revoked_in_the_admin_is_the_admins(as_superuser, superuser, thread):  # noqa: F811
    from sharing import services

    link = services.create_link(thread=thread).link
    change = f"/admin/sharing/sharelink/{link.pk}/change/"
    response = as_superuser.post(change, {"revoked_at_0": "2026-01-02", "revoked_at_1": "10:00:00"})
    assert response.status_code == 302, response.content.decode()[:2000]
    [revoked] = events("share_link.revoked")
    assert (revoked.actor, revoked.detail["via"]) == (superuser, "admin")
    assert [e.action for e in events("admin.changed")] == ["admin.changed"]
