from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import path, reverse
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


app_name = "languages"
urlpatterns = [
    path("settings/language/", choose, name="choose"),
    # The page's JavaScript strings in the page's language (window.gettext; static/chat/i18n.js reads them).
    path("jsi18n/", JavaScriptCatalog.as_view(), name="catalog"),
]
