"""Read-only links to a snapshot of a thread. The token lives only in the URL its owner was shown once;
this table holds its SHA-256, so a copy of the database opens no shared page."""

from __future__ import annotations

import hashlib
import secrets
import uuid

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from chat.models import Thread

#: What the shared page calls an owner who has no first name and typed no other name.
ANONYMOUS_NAME = "A user"
DISPLAY_NAME_LENGTH = 80


def new_token() -> str:
    """256 random bits, URL-safe: 43 characters."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def default_display_name(user) -> str:
    """The owner's first name, else a neutral name: never the username or the email address."""
    return (getattr(user, "first_name", "") or "").strip()[:DISPLAY_NAME_LENGTH] or ANONYMOUS_NAME


class ShareLinkQuerySet(models.QuerySet):
    def active(self) -> ShareLinkQuerySet:
        return self.filter(revoked_at__isnull=True, thread__owner__is_active=True)


class ShareLink(models.Model):
    # A random id, so an owner's links cannot be counted or guessed from their URLs.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="share_links")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    # The conversation as it was when shared (or last updated), with the hidden parts already left out.
    snapshot = models.JSONField(default=dict)
    hide_tool_details = models.BooleanField(
        default=False, help_text=_("Tool cards show only the tool's name and status: no arguments, no results.")
    )
    hide_system_prompt = models.BooleanField(default=True)
    # The messages' attachments (images shown, files downloadable) through the link; off: only their names.
    share_attachments = models.BooleanField(default=False)
    display_name = models.CharField(
        max_length=DISPLAY_NAME_LENGTH, help_text=_("All the shared page shows of the owner.")
    )
    created_at = models.DateTimeField(editable=False)
    # When the snapshot was last taken.
    updated_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ShareLinkQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("share link")

    def save(self, *args, **kwargs) -> None:
        # One clock reading for both, so a fresh link does not look updated by a microsecond.
        now = timezone.now()
        self.created_at = self.created_at or now
        self.updated_at = self.updated_at or self.created_at
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"Share of {self.thread_id} by {self.display_name}"

    @property
    def was_updated(self) -> bool:
        """The snapshot was re-taken after the link was made."""
        return self.updated_at > self.created_at

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def revoke(self) -> bool:
        """The shared page 404s from now on. Revoking twice keeps the first date. True when this call revoked it."""
        if self.revoked_at is not None:
            return False
        now = timezone.now()
        if not ShareLink.objects.filter(pk=self.pk, revoked_at__isnull=True).update(revoked_at=now):
            return False
        self.revoked_at = now
        return True
