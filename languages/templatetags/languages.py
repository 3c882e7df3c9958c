from urllib.parse import urlencode

from django import template
from django.apps import apps
from django.conf import settings
from django.urls import NoReverseMatch, reverse
from django.utils import translation

from ..middleware import chosen_language

register = template.Library()


@register.simple_tag
def language_choices(request) -> dict:
    """What the settings page's Language section offers: the languages (each named in itself), and the person's
    choice ("" for the browser's)."""
    return {"languages": settings.LANGUAGES, "chosen": chosen_language(request)}


@register.simple_tag
def catalogue_url() -> str:
    """The JavaScript catalogue of the page's language, at an address that changes when the catalogues are rebuilt."""
    code = translation.get_language() or settings.LANGUAGE_CODE
    version = apps.get_app_config("languages").catalogue_version
    try:
        address = reverse("languages:catalog")
    except NoReverseMatch:  # a URLconf without it (an error page drawn while the app is half there): no catalogue
        return ""
    return f"{address}?{urlencode({'l': code, 'v': version})}"
