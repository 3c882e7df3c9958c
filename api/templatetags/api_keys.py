"""The person's API keys as the settings page lists them (templates/api/keys_section.html): the chat app's page shows
what this app holds through this library, without importing it (this app imports the chat app)."""

from django import template
from django.utils import timezone

from api.forms import KeyForm
from api.keys import keys_of

register = template.Library()


@register.simple_tag
def api_keys_of(user) -> list:
    return keys_of(user) if getattr(user, "is_authenticated", False) else []


@register.simple_tag
def api_key_form(user) -> KeyForm:
    return KeyForm(user=user)


@register.filter
def key_state(row) -> str:
    """The key's state, "revoked", "expired" or "active": in words, so the list does not say it by colour alone."""
    if row.revoked_at is not None:
        return "revoked"
    if row.expires_at is not None and row.expires_at <= timezone.now():
        return "expired"
    return "active"
