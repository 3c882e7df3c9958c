"""Retention: `manage.py audit prune` removes what is older than AGENTWEB_AUDIT_RETENTION_DAYS (0: nothing, ever),
says so in the log itself, and does not read in again the admin's entries it pruned."""

import io
from datetime import timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.management import CommandError, call_command
from django.utils import timezone

import audit
from audit import retention
from audit.models import Event

pytestmark = pytest.mark.django_db


def aged(days: float, action=audit.Action.SIGNIN, **fields) -> Event:
    return audit.record(action, at=timezone.now() - timedelta(days=days), **fields)


def prune(*args) -> str:
    out = io.StringIO()
    call_command("audit", "prune", *args, stdout=out)
    return out.getvalue()


def test_prune_removes_what_is_older_than_the_retention(settings, owner, monkeypatch):
    settings.AGENTWEB_AUDIT_RETENTION_DAYS = 30
    monkeypatch.setattr(retention, "PRUNE_BATCH", 2)  # in several short deletes
    old = [aged(31, actor=owner) for _ in range(5)]
    kept = aged(29, actor=owner)
    assert "Removed 5 audit event(s) older than 30 day(s)." in prune()
    assert not Event.objects.filter(pk__in=[e.pk for e in old]).exists()
    assert Event.objects.filter(pk=kept.pk).exists()
    [pruned] = Event.objects.filter(action="audit.pruned")
    assert pruned.detail["removed"] == 5 and pruned.actor is None


def test_days_given_to_the_command_win_for_that_run(settings):
    settings.AGENTWEB_AUDIT_RETENTION_DAYS = 365
    aged(10)
    prune("--days", "7")
    assert list(Event.objects.values_list("action", flat=True)) == ["audit.pruned"]
    with pytest.raises(CommandError):
        prune("--days", "0")


def test_zero_keeps_the_log_forever(settings):
    settings.AGENTWEB_AUDIT_RETENTION_DAYS = 0
    ancient = aged(10_000)
    assert "kept forever" in prune()
    assert list(Event.objects.all()) == [ancient]
    assert retention.prune() == 0


def test_pruned_admin_entries_are_not_read_in_again(settings, owner):
    settings.AGENTWEB_AUDIT_RETENTION_DAYS = 30
    kind = ContentType.objects.get_for_model(owner)
    old = LogEntry.objects.create(
        user=owner, content_type=kind, object_id=str(owner.pk), object_repr="owner", action_flag=CHANGE
    )
    LogEntry.objects.filter(pk=old.pk).update(action_time=timezone.now() - timedelta(days=40))
    Event.objects.filter(admin_log_entry=old.pk).update(at=timezone.now() - timedelta(days=40))
    prune()
    retention.housekeeping()
    assert not Event.objects.filter(admin_log_entry=old.pk).exists()
