"""The audit log's one table: an event is written once and never changed; only retention removes it."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .actions import Action

#: A label's length at most (Django's LogEntry keeps 200 characters of an object's name too).
LABEL_LENGTH = 200


class Event(models.Model):
    at = models.DateTimeField(default=timezone.now, editable=False)
    # Who did it: the account while it exists, and its username as it was then (kept after the account goes).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", editable=False
    )
    actor_name = models.CharField(_("actor's name"), max_length=150, blank=True, editable=False)
    action = models.CharField(max_length=32, choices=Action.choices, editable=False)
    # What it was done to: its kind (an app label and model, or a word: "user"), its id and a name to read.
    target_type = models.CharField(max_length=64, blank=True, editable=False)
    target_id = models.CharField(max_length=64, blank=True, editable=False)
    target_label = models.CharField(max_length=LABEL_LENGTH, blank=True, editable=False)
    ip = models.GenericIPAddressField(_("IP address"), null=True, blank=True, editable=False)
    # A few scalar facts (audit/recording.py `clean_detail`): never a secret, a token or a tool's arguments.
    detail = models.JSONField(default=dict, blank=True, editable=False)
    # The admin's LogEntry this event mirrors (audit/admin_log.py): never mirrored twice. Not a foreign key: the
    # admin's log loses a person's entries with their account, this log keeps them.
    admin_log_entry = models.PositiveBigIntegerField(null=True, blank=True, unique=True, editable=False)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["at"], name="audit_event_at"),
            models.Index(fields=["action", "at"], name="audit_event_action_at"),
            models.Index(fields=["actor", "at"], name="audit_event_actor_at"),
        ]

    def __str__(self) -> str:
        who = self.actor_name or "—"
        what = self.target_label or self.target_id
        return f"{self.at:%Y-%m-%d %H:%M:%S} {who} {self.action}" + (f" {what}" if what else "")
