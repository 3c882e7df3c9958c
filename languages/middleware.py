"""A signed-in person's own language, over the cookie and the browser's (Django's LocaleMiddleware, before this)."""

from django.conf import settings
from django.utils import translation

from .models import LanguageChoice

#: The person's choice as read from the database, kept in their session: one read per session, not per request.
#: A choice made on another device reaches this one at its next sign-in (a new session) or when the person picks
#: a language here; the settings page writes both.
SESSION_KEY = "agentweb_language"


def chosen_language(request) -> str:
    """The code the signed-in person chose ("" for none, or nobody signed in)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return ""
    if SESSION_KEY not in request.session:
        request.session[SESSION_KEY] = LanguageChoice.of(user)
    code = request.session[SESSION_KEY]
    return code if code in dict(settings.LANGUAGES) else ""


def remember(request, response, code: str) -> None:
    """`code` as this browser's language too (the cookie, read before anyone signs in), or none for ""."""
    request.session[SESSION_KEY] = code
    if code:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            code,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            samesite=settings.LANGUAGE_COOKIE_SAMESITE,
            httponly=True,
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME, samesite=settings.LANGUAGE_COOKIE_SAMESITE)


class PersonLanguageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        code = chosen_language(request)
        if code and code != request.LANGUAGE_CODE:
            translation.activate(code)
            request.LANGUAGE_CODE = code
        response = self.get_response(request)
        if code and request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME) != code:
            # This browser's login page then speaks it too, after the person signs out.
            remember(request, response, code)
        return response
