"""A person's notification channels, their browsers' push subscriptions, and the events told (one row per event:
its key is unique, so the same event told twice, by one process or two, is sent once)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from agentweb.fields import EncryptedTextField

#: The channels, and the events a person may be told of on each (chat/notify.py's kinds), in the page's order.
CHANNELS = ("push", "email", "webhook")
EVENT_KINDS = (
    ("approval", _("A call waits for my approval")),
    ("input", _("A tool asks for my input")),
    ("failed", _("A run failed")),
    ("finished", _("A scheduled or triggered run finished")),
)
KINDS = tuple(kind for kind, _label in EVENT_KINDS)


class Preference(models.Model):
    """Which channels tell the person (none until they choose). The webhook's secret is encrypted at rest and never
    shown back on a page."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="notification_preference"
    )
    push = models.BooleanField(default=False)
    email = models.BooleanField(default=False)
    webhook = models.BooleanField(default=False)
    webhook_url = models.URLField(max_length=500, blank=True)
    webhook_secret = EncryptedTextField(blank=True)
    # Per channel, the events it tells (a list of KINDS): {"email": ["failed"]} emails only failed runs. A channel
    # not named here tells every event, so a person who only turned a channel on is told everything by it.
    events = models.JSONField(default=dict, blank=True)

    def channels(self) -> list[str]:
        return [name for name in CHANNELS if getattr(self, name)]

    def kinds_of(self, channel: str) -> frozenset[str]:
        """The events `channel` tells (whether or not the channel is on)."""
        chosen = (self.events or {}).get(channel) if isinstance(self.events, dict) else None
        if not isinstance(chosen, list):
            return frozenset(KINDS)
        return frozenset(kind for kind in chosen if kind in KINDS)

    def channels_for(self, kind: str) -> list[str]:
        """The channels that are on and tell events of `kind`."""
        return [channel for channel in self.channels() if kind in self.kinds_of(channel)]


class PushSubscription(models.Model):
    """A browser's Web Push subscription (the service worker's PushManager.subscribe): where to post, and the keys
    the payload is encrypted to."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions")
    endpoint = models.URLField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=200)
    auth = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)


class Event(models.Model):
    """An event a person is told of: recorded once (its key), sent with the others of its window (sent_at)."""

    key = models.CharField(max_length=200, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=20)
    thread_id = models.UUIDField()
    thread_title = models.CharField(max_length=200, blank=True)
    agent = models.CharField(max_length=100, blank=True)
    tool = models.CharField(max_length=200, blank=True)
    run_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "sent_at"], name="notification_unsent")]
