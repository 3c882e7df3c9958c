"""The settings page's notifications section reads the person's choices through this tag (chat/ does not import
the notifications app)."""

from django import template
from django.core.exceptions import ImproperlyConfigured

from .. import vapid
from ..forms import PreferenceForm
from ..views import preference_of

register = template.Library()


@register.simple_tag
def notification_settings(user) -> dict:
    preference = preference_of(user)
    form = PreferenceForm(
        preference=preference,
        initial={
            "push": preference.push,
            "email": preference.email,
            "email_address": user.email,
            "webhook": preference.webhook,
            "webhook_url": preference.webhook_url,
        },
    )
    try:
        vapid_key = vapid.public_key()
    except ImproperlyConfigured:  # no key can be kept (a read-only checkout): the page still works, push does not
        vapid_key = ""
    return {
        "form": form,
        "secret_set": bool(preference.webhook_secret),
        "browsers": user.push_subscriptions.count(),
        "vapid_key": vapid_key,
    }
