"""`audit.record` itself: what a detail may hold, and which actions fail closed (undone with the action) or open
(the action goes on, the failure logged); and the receiver waiting for the MCP connections' signal."""

import pytest
from django.db import DatabaseError, transaction
from django.dispatch import Signal
from django.urls import reverse

import audit
from audit.models import Event
from audit.receivers import mcp_connection_changed
from audit.recording import clean_detail
from sharing.models import ShareLink
from tests.sharing.conftest import thread  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_detail_keeps_short_scalars_and_never_a_secret_or_arguments():
    cleaned = clean_detail(
        {
            "tool": "calculator",
            "password": "hunter2",
            "api_key": "aw-123",
            "access-token": "t",
            "args": {"expression": "1+1"},
            "message": "my pin",
            "count": 3,
            "note": "x" * 1000,
            "nested": {"a": 1},
        }
    )
    assert cleaned == {"tool": "calculator", "count": 3, "note": "x" * 200, "nested": "{'a': 1}"}


def test_an_ip_that_is_not_one_is_left_out(owner):
    assert audit.record(audit.Action.SIGNIN, actor=owner, ip="not-an-ip; drop table").ip is None
    assert audit.record(audit.Action.SIGNIN, actor=owner, ip="::ffff:10.0.0.1").ip == "10.0.0.1"
    assert audit.record(audit.Action.SIGNIN, actor=owner, ip="2001:DB8::1").ip == "2001:db8::1"


def unwritable(monkeypatch):
    def broken(self, *args, **kwargs):
        raise DatabaseError("the audit table is unwritable")

    monkeypatch.setattr(Event, "save", broken)


def test_a_share_link_whose_event_cannot_be_written_is_not_made(as_owner, thread, monkeypatch):  # noqa: F811
    """Fail closed: the link and its event are one transaction."""
    unwritable(monkeypatch)
    as_owner.raise_request_exception = False
    response = as_owner.post(reverse("sharing:create", args=[thread.id]), HTTP_ACCEPT="application/json")
    assert response.status_code == 500
    assert not ShareLink.objects.exists()


def test_a_revocation_whose_event_cannot_be_written_still_revokes(as_owner, thread, monkeypatch, caplog):  # noqa: F811
    """Fail open: refusing a revocation because the log failed would keep the link working."""
    from sharing import services

    link = services.create_link(thread=thread).link
    unwritable(monkeypatch)
    as_owner.post(reverse("sharing:revoke", args=[link.pk]))
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert "share_link.revoked event could not be written" in caplog.text


def test_a_fail_open_failure_leaves_the_callers_transaction_usable(owner, monkeypatch):
    with transaction.atomic():
        unwritable(monkeypatch)
        assert audit.record(audit.Action.SIGNOUT, actor=owner) is None
        monkeypatch.undo()
        audit.record(audit.Action.SIGNIN, actor=owner)
    assert list(Event.objects.values_list("action", flat=True)) == ["signin"]


def test_the_mcp_receiver_records_a_persons_connections(owner):
    changed = Signal()  # the MCP credentials' signal, as its app will define it
    changed.connect(mcp_connection_changed)

    class Server:  # a row of the mcpservers app: its label, key and name are what is kept
        class _meta:
            label_lower = "mcpservers.mcpserver"

        pk = 7

        def __str__(self):
            return "GitHub"

    changed.send(sender=None, user=owner, server=Server(), action="connected")
    changed.send(sender=None, user=owner, server="GitHub", action="disconnected")
    changed.send(sender=None, user=owner, server="GitHub", action="refreshed")
    rows = list(
        Event.objects.order_by("id").values_list("action", "actor_name", "target_type", "target_id", "target_label")
    )
    assert rows == [
        ("mcp.connected", "owner", "mcpservers.mcpserver", "7", "GitHub"),
        ("mcp.disconnected", "owner", "mcpservers.mcpserver", "", "GitHub"),
        ("mcp.changed", "owner", "mcpservers.mcpserver", "", "GitHub"),
    ]
    assert Event.objects.get(action="mcp.changed").detail == {"change": "refreshed"}
