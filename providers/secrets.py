"""Keeping API keys and the credentials of a base URL out of every text the app writes.

A base URL may carry credentials (http://user:password@host/v1, for a server behind basic auth). They are
taken out of the URL once, when a provider is made: the request goes to the bare URL with the credentials as
basic auth, so neither a label, an error message nor httpx's own "HTTP Request: POST …" log line can show
them. `public_url` is the form every text uses.

What a model server sends back may still echo a secret ("Incorrect API key provided: sk-…"). `Redactor`
masks each secret in a server's text before that text is cut to length (cutting first would leave the
secret's first characters behind the cut). A long secret is masked wherever it appears; a short one only
where it stands alone, so that a key "x" does not turn "expected" into "e***pected".

Plain Python, no Django: providers/ and modelconfig/ both use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import SplitResult, unquote, urlsplit

MASK = "***"
#: Secrets at least this long are masked anywhere in a text; shorter ones only where they stand alone.
MASK_ANYWHERE_FROM = 8
_WORD_CHAR = r"[A-Za-z0-9]"
# userinfo in any URL of a text: scheme://user[:password]@ (stops at the first character that ends an authority)
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s'\"<>]*@")


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """`url` without its userinfo, and the (user, password) it carried, percent-decoded (None: it had none)."""
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    bare = SplitResult(parts.scheme, host, parts.path, parts.query, parts.fragment).geturl()
    return bare, (unquote(user), unquote(password))


def public_url(url: str) -> str:
    """`url` as it may be shown or logged: without user name and password."""
    return split_credentials(url)[0]


def without_url_credentials(text: str) -> str:
    """`text` with the userinfo of every URL in it taken out (for texts written before it was kept out)."""
    return _URL_USERINFO.sub(r"\g<scheme>", text)


class Redactor:
    """Masks the given secrets in a text: call it on a server's text before cutting or quoting it."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        found = sorted({s for s in secrets if s}, key=len, reverse=True)  # longest first: "ab" inside "abc"
        self._pattern = re.compile("|".join(_alternative(s) for s in found)) if found else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        return self._pattern.sub(MASK, text) if self._pattern is not None else text


def _alternative(secret: str) -> str:
    escaped = re.escape(secret)
    if len(secret) >= MASK_ANYWHERE_FROM:
        return escaped
    return f"(?<!{_WORD_CHAR}){escaped}(?!{_WORD_CHAR})"
