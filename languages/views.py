from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils import translation
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django.views.i18n import JavaScriptCatalog

from .middleware import remember
from .models import LanguageChoice


@require_POST
@login_required
def choose(request: HttpRequest) -> HttpResponse:
    """The settings page's Language section: a code of settings.LANGUAGES, or "" for the browser's language; kept
    with the person and in this browser's cookie, then back to the settings page, drawn in it."""
    code = request.POST.get("language", "")
    if code != "" and code not in dict(settings.LANGUAGES):
        return HttpResponseBadRequest(_("That language is not offered."), content_type="text/plain; charset=utf-8")
    LanguageChoice.choose(request.user, code)
    response = redirect(f"{reverse('chat:settings')}?saved=1")
    remember(request, response, code)
    return response


class Catalogue(JavaScriptCatalog):
    """Django's JavaScript catalogue in the language its address names (`?l=`, the page's), else the request's: the
    address then says everything the answer depends on (with `v`, the catalogues' version: templatetags), so a
    browser keeps it rather than asking again on every page."""

    def get(self, request, *args, **kwargs):
        code = request.GET.get("l", "")
        if code in dict(settings.LANGUAGES):
            translation.activate(code)
        response = super().get(request, *args, **kwargs)
        if "v" in request.GET:
            patch_cache_control(response, public=True, max_age=365 * 86400, immutable=True)
        return response


app_name = "languages"
urlpatterns = [
    path("settings/language/", choose, name="choose"),
    # The page's JavaScript strings in the page's language (window.gettext; static/chat/i18n.js reads them).
    path("jsi18n/", Catalogue.as_view(), name="catalog"),
]
