"""API keys: a person's credential for programs (docs/api.md). Shown once when made; stored only as a hash."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

#: Every key starts with this, so that a leaked key is recognisable (and secret scanners can be taught it).
KEY_PREFIX = "aw-"
#: The part of a key kept in clear to find its row (and shown, "aw-AbCdEfGh…", to tell keys apart): 8 characters.
LOOKUP_LENGTH = 8
#: A key's last use is written at most this often: an API call does not cost a write per request.
LAST_USED_EVERY = timedelta(minutes=1)


def digest(key: str) -> str:
    """A key's stored form. A key is 256 random bits, so a fast hash is enough: nothing to guess from it."""
    return hashlib.sha256(key.encode()).hexdigest()


class ApiKey(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    # The key's first characters after its prefix, in clear: finds the row, tells keys apart. Not a secret alone.
    lookup = models.CharField(max_length=LOOKUP_LENGTH, unique=True, editable=False)
    hashed = models.CharField(_("hash"), max_length=64, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True, help_text=_("Empty: the key does not expire."))
    revoked_at = models.DateTimeField(null=True, blank=True, help_text=_("Set: the key no longer works."))
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("API key")

    def __str__(self):
        return f"{self.name} ({self.shown})"

    @property
    def shown(self) -> str:
        """How the key is named on pages: its prefix and lookup, never more."""
        return f"{KEY_PREFIX}{self.lookup}…"

    @classmethod
    def issue(cls, user, name: str, *, expires_in_days: int | None = None) -> tuple[ApiKey, str]:
        """A new key for `user`: the row, and the key itself, which is never stored and cannot be shown again."""
        while True:
            key = KEY_PREFIX + secrets.token_urlsafe(32)
            lookup = key[len(KEY_PREFIX) : len(KEY_PREFIX) + LOOKUP_LENGTH]
            if not cls.objects.filter(lookup=lookup).exists():
                break
        expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
        row = cls.objects.create(user=user, name=name[:100], lookup=lookup, hashed=digest(key), expires_at=expires_at)
        return row, key

    @classmethod
    def matching(cls, key: str) -> ApiKey | None:
        """The row of `key` (revoked or expired ones too), with its person; None when no key is `key`."""
        if not key.startswith(KEY_PREFIX) or len(key) > 200:
            return None
        lookup = key[len(KEY_PREFIX) : len(KEY_PREFIX) + LOOKUP_LENGTH]
        row = cls.objects.select_related("user").filter(lookup=lookup).first()
        if row is None or not hmac.compare_digest(row.hashed, digest(key)):
            return None
        return row

    def refusal(self, now=None) -> str | None:
        """Why this key may not be used now (revoked, expired, its person deactivated), or None."""
        now = now or timezone.now()
        if self.revoked_at is not None:
            return "This API key has been revoked."
        if self.expires_at is not None and self.expires_at <= now:
            return "This API key has expired."
        if not self.user.is_active:
            return "This API key's account is deactivated."
        return None

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    def note_use(self, now=None) -> None:
        """Record that the key was used, at most once per LAST_USED_EVERY (one UPDATE, no read)."""
        now = now or timezone.now()
        if self.last_used_at is None or now - self.last_used_at >= LAST_USED_EVERY:
            ApiKey.objects.filter(pk=self.pk).update(last_used_at=now)
            self.last_used_at = now
