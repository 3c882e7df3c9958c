"""The settings page's notification form: the channels, the events each tells, the account's email address, the
webhook."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import CHANNELS, EVENT_KINDS, Preference

SECRET_MIN = 16


class PreferenceForm(forms.Form):
    push = forms.BooleanField(required=False, label=_("Push notifications in this browser and your others"))
    email = forms.BooleanField(required=False, label=_("Email"))
    email_address = forms.EmailField(required=False, label=_("Your email address"), max_length=254)
    webhook = forms.BooleanField(required=False, label=_("A webhook of yours"))
    webhook_url = forms.URLField(required=False, label=_("Webhook URL"), max_length=500, assume_scheme="https")
    # Never shown back: empty keeps the secret already set.
    webhook_secret = forms.CharField(
        required=False,
        label=_("Webhook secret"),
        max_length=200,
        strip=True,
        widget=forms.PasswordInput(render_value=False),
        help_text=_("Signs each delivery (X-Agentweb-Signature). Empty keeps the one set."),
    )

    # The page's table of events by channel: `<channel>_events` holds the ticked events of each. A post without
    # `events_shown` (a script that only turns channels on) leaves the choices as they were.
    push_events = forms.MultipleChoiceField(required=False, choices=EVENT_KINDS, widget=forms.CheckboxSelectMultiple)
    email_events = forms.MultipleChoiceField(required=False, choices=EVENT_KINDS, widget=forms.CheckboxSelectMultiple)
    webhook_events = forms.MultipleChoiceField(required=False, choices=EVENT_KINDS, widget=forms.CheckboxSelectMultiple)
    events_shown = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, preference: Preference, **kwargs):
        super().__init__(*args, **kwargs)
        self.preference = preference

    def matrix(self) -> list[dict]:
        """The table the page shows: one row per event, a ticked or clear box per channel (as posted when the form
        is bound, else as kept)."""
        rows = []
        for kind, label in EVENT_KINDS:
            cells = []
            for channel in CHANNELS:
                name = f"{channel}_events"
                if self.is_bound:
                    ticked = kind in self.data.getlist(name) if self.data.get("events_shown") else True
                else:
                    ticked = kind in self.preference.kinds_of(channel)
                cells.append({"channel": channel, "name": name, "ticked": ticked, "id": f"id_{name}_{kind}"})
            rows.append({"kind": kind, "label": label, "cells": cells})
        return rows

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("email") and not cleaned.get("email_address"):
            self.add_error("email_address", _("Email needs your address."))
        if cleaned.get("webhook"):
            if not cleaned.get("webhook_url"):
                self.add_error("webhook_url", _("The webhook needs its URL."))
            secret = cleaned.get("webhook_secret") or self.preference.webhook_secret
            if not secret:
                self.add_error("webhook_secret", _("The webhook needs a secret to sign with."))
        if cleaned.get("events_shown"):
            for channel in CHANNELS:
                if cleaned.get(channel) and not cleaned.get(f"{channel}_events"):
                    self.add_error(
                        f"{channel}_events",
                        _("Tick an event for %(channel)s, or turn %(channel)s off.") % {"channel": channel},
                    )
        secret = cleaned.get("webhook_secret")
        if secret and len(secret) < SECRET_MIN:
            self.add_error("webhook_secret", _("A secret of at least %(n)s characters.") % {"n": SECRET_MIN})
        return cleaned

    def save(self, user) -> Preference:
        data, preference = self.cleaned_data, self.preference
        preference.push, preference.email, preference.webhook = data["push"], data["email"], data["webhook"]
        preference.webhook_url = data["webhook_url"]
        if data.get("events_shown"):
            preference.events = {channel: list(data[f"{channel}_events"]) for channel in CHANNELS}
        if data["webhook_secret"]:
            preference.webhook_secret = data["webhook_secret"]
        preference.save()
        if data["email_address"] != user.email:
            user.email = data["email_address"]
            user.save(update_fields=["email"])
        return preference
