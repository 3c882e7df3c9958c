from django import template
from django.conf import settings

from ..middleware import chosen_language

register = template.Library()


@register.simple_tag
def language_choices(request) -> dict:
    """What the settings page's Language section offers: the languages (each named in itself), and the person's
    choice ("" for the browser's)."""
    return {"languages": settings.LANGUAGES, "chosen": chosen_language(request)}
