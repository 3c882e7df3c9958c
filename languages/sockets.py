"""The language of a page's websocket: what the page itself was drawn in, read from the handshake (no database):
the `agentweb_language` cookie (a signed-in person's choice is copied into it on every page, languages.middleware),
else the browser's Accept-Language, else English. The socket's messages to people are said in it."""

from __future__ import annotations

from django.conf import settings
from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header

from .phrases import Phrase


def socket_language(scope) -> str:
    cookie = (scope.get("cookies") or {}).get(settings.LANGUAGE_COOKIE_NAME)
    headers = dict(scope.get("headers") or ())
    accepted = [code for code, _q in parse_accept_lang_header(headers.get(b"accept-language", b"").decode("latin-1"))]
    for code in ([cookie] if cookie else []) + [c for c in accepted if c != "*"]:
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


def said_in(language: str, text: str) -> str:
    """`text` in `language`: an English message marked with gettext_noop where it was written, or a Phrase (one
    with values in it, languages/phrases.py); a message the catalogues do not hold stays as it is."""
    with translation.override(language):
        return text.said() if isinstance(text, Phrase) else translation.gettext(text)
