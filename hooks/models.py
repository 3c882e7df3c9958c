"""Webhook triggers (docs/background.md): a person's agent and prompt template, started by a signed POST to
/hooks/<id>, and the deliveries each took (one run per delivery id)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from agentweb.fields import EncryptedTextField

from . import template


def new_trigger_id() -> str:
    """The trigger's address: 128 random bits, so that ids cannot be walked (an unknown id and a bad signature are
    answered alike anyway, hooks/deliveries.py). Never one that starts with "-": `triggers remove ID` would read it as
    an option (CI met one, 1 in 64)."""
    while (trigger_id := secrets.token_urlsafe(16)).startswith("-"):
        pass
    return trigger_id


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


class Trigger(models.Model):
    id = models.CharField(primary_key=True, max_length=32, default=new_trigger_id, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="triggers")
    name = models.CharField(max_length=100, blank=True)
    # The agent's slug as its owner picks it (agents.services.pick_by_slug): checked when the trigger is made and
    # again by every delivery's turn, so an agent the owner lost is refused then, not run. Blank: the default agent.
    agent_slug = models.CharField(_("agent"), max_length=100, blank=True)
    prompt = models.TextField(
        help_text=_("{field} and {field.sub} are filled from the posted JSON; {{ and }}: a brace.")
    )
    # Encrypted at rest (it must be read back to check each delivery's HMAC); shown once, when made.
    secret = EncryptedTextField(editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_delivery_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name or f"Trigger {self.pk}"

    def clean(self):
        try:
            template.parse(self.prompt)
        except template.BadTemplate as error:
            raise ValidationError({"prompt": str(error)}) from None


class Delivery(models.Model):
    """One POST a trigger took: its delivery id (the sender's X-Agentweb-Delivery, else one made up), and the thread it
    started once its turn is written (null for the moment between)."""

    trigger = models.ForeignKey(Trigger, on_delete=models.CASCADE, related_name="deliveries")
    delivery_id = models.CharField(max_length=200)
    thread = models.ForeignKey("chat.Thread", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = _("deliveries")
        constraints = [models.UniqueConstraint(fields=["trigger", "delivery_id"], name="hooks_delivery_once")]
