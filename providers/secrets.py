"""Keeping API keys and the credentials of a base URL out of every text the app writes.

A base URL may carry credentials (http://user:password@host/v1, for a server behind basic auth). They are
taken out of the URL once, when a provider is made: the request goes to the bare URL with the credentials as
basic auth, so neither a label, an error message nor httpx's own "HTTP Request: POST …" log line can show
them. `public_url` is the form every text uses.

What a server sends back may still echo a secret ("Incorrect API key provided: sk-…"), and a proxy may echo
the whole request, headers included. `Redactor` masks each secret in a server's text before that text is cut to
length (cutting first would leave the secret's first characters behind the cut), in every form the app itself
sent it in (`forms_of`): as it is, percent-encoded (in a URL), JSON-escaped, and for the credentials of a URL
the `Basic` authorization they became (base64 of `user:password`, and the whole header value). A long secret is
masked wherever it appears; a short one only where it stands alone, so that a key "x" does not turn "expected"
into "e***pected". `Redactor.for_request` builds one from what a request carries (its URL's credentials and
secret query values, its secret headers, an API key): the model providers, HTTP tools and MCP servers all mask
their errors with it.

`masked_url` is the form of a URL shown to people who may not see its secrets (the password of its userinfo
and the values of its secret query parameters, `SECRET_QUERY_NAME`), and `origin` is where a URL points
(scheme, host, port): a stored secret is pinned to it (agentweb/pinned_secrets.py).

Plain Python, no Django: providers/, tools/ and the apps' admins use it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import SplitResult, quote, quote_plus, unquote, unquote_plus, urlsplit

MASK = "***"
#: What a masked URL shows in place of a secret (a password, a token in its query).
HIDDEN = "••••"
#: Query parameters whose value is a secret: ?token=, ?api_key=, ?access_token=, ?sig=, ?password=, …
SECRET_QUERY_NAME = re.compile(r"token|key|secret|pass|pwd|auth|sig|credential|session|jwt|bearer", re.IGNORECASE)
#: Words of a header value at least this long are secrets of their own ("Bearer <token>": the token alone).
SECRET_WORD_FROM = 8
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
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


def origin(url: str) -> tuple[str, str, int | None] | None:
    """Where `url` points: its scheme, host (lower case, no trailing dot) and port (the scheme's default when none
    is written). None for a text that is no URL with a host. User name, password, path and query are not part of
    it: a change of them keeps a stored secret, a change of the origin clears it (agentweb/pinned_secrets.py)."""
    parts = urlsplit(str(url or "").strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if not scheme or not host:
        return None
    try:
        port = parts.port
    except ValueError:  # not a number: the port as written is where it points
        return scheme, host, -1
    return scheme, host, port if port is not None else DEFAULT_PORTS.get(scheme)


def secret_query_values(url: str) -> list[str]:
    """The values of the secret query parameters of `url`: as written, and decoded (with "+" as a plus and as a
    space, since servers read it either way)."""
    found: list[str] = []
    for pair in urlsplit(str(url or "")).query.split("&"):
        name, equals, value = pair.partition("=")
        if equals and value and is_secret_query_name(unquote_plus(name)):
            found += [value, unquote(value), unquote_plus(value)]
    return found


def is_secret_query_name(name: str) -> bool:
    return bool(SECRET_QUERY_NAME.search(name))


def masked_url(url: str) -> str:
    """`url` as it may be shown to anyone: the password of its userinfo (the whole userinfo when it is a user name
    alone, often a token: https://TOKEN@host) and the value of each secret query parameter as ••••."""
    scheme, sep, rest = str(url or "").partition("://")
    if not sep:
        return _masked_query(str(url or ""))
    authority_end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:authority_end], rest[authority_end:]
    userinfo, at, host = authority.rpartition("@")
    if at:
        user, colon, _ = userinfo.partition(":")
        authority = f"{user}:{HIDDEN}@{host}" if colon else f"{HIDDEN}@{host}"
    return f"{scheme}://{authority}{_masked_query(tail)}"


def _masked_query(tail: str) -> str:
    path, question, query = tail.partition("?")
    if not question:
        return tail
    query, hash_, fragment = query.partition("#")
    pairs = []
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        secret = equals and value and is_secret_query_name(unquote_plus(name))
        pairs.append(f"{name}={HIDDEN}" if secret else pair)
    return f"{path}?{'&'.join(pairs)}{hash_}{fragment}"


def restore_hidden(typed: str, stored: str, *, carry: bool = True) -> tuple[str, list[str]]:
    """`typed`, a URL edited from `masked_url(stored)`, with each •••• it kept put back from `stored`: the password,
    and the value of the secret query parameter of the same name (the same occurrence of it). Not `carry` (the URL
    now points at another server), or where `stored` has no such value, a •••• is dropped instead (the userinfo, or
    the parameter). Returns the URL and what was dropped ("password", "token", …)."""
    dropped: list[str] = []
    scheme, sep, rest = typed.partition("://")
    if not sep:
        return typed, dropped
    authority_end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:authority_end], rest[authority_end:]
    userinfo, at, host = authority.rpartition("@")
    if at and HIDDEN in (userinfo, userinfo.partition(":")[2]):
        old = _userinfo(stored)
        if carry and old is not None and (":" in old) == (":" in userinfo):
            kept = f"{userinfo.partition(':')[0]}:{old.partition(':')[2]}" if ":" in old else old
            authority = f"{kept}@{host}"
        else:
            authority = host
            dropped.append("password")
    path, question, query = tail.partition("?")
    if not question:
        return f"{scheme}://{authority}{tail}", dropped
    query, hash_, fragment = query.partition("#")
    old_values: dict[str, list[str]] = {}
    for pair in urlsplit(stored).query.split("&"):
        name, _, value = pair.partition("=")
        old_values.setdefault(name, []).append(value)
    seen: dict[str, int] = {}
    pairs = []
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        index = seen[name] = seen.get(name, -1) + 1
        if not (equals and value == HIDDEN):
            pairs.append(pair)
            continue
        olds = old_values.get(name, [])
        if carry and index < len(olds) and olds[index]:
            pairs.append(f"{name}={olds[index]}")
        else:
            dropped.append(unquote_plus(name))
    rebuilt = "&".join(pairs)
    return f"{scheme}://{authority}{path}{'?' if rebuilt else ''}{rebuilt}{hash_}{fragment}", dropped


def _userinfo(url: str) -> str | None:
    rest = str(url or "").partition("://")[2]
    authority = rest[: min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))]
    userinfo, at, _ = authority.rpartition("@")
    return userinfo if at else None


def without_url_credentials(text: str) -> str:
    """`text` with the userinfo of every URL in it taken out (for texts written before it was kept out)."""
    return _URL_USERINFO.sub(r"\g<scheme>", text)


def forms_of(secret: str) -> set[str]:
    """The forms a secret the app sent may come back in: as it is, percent-encoded as a URL carries it (either
    case of hex digits, spaces as %20 or +), and JSON-escaped (non-ASCII as \\u escapes, "/" as "\\/" too)."""
    found = {secret}
    for encoded in (quote(secret, safe=""), quote(secret, safe="/:@!$&'()*+,;="), quote_plus(secret)):
        found |= {encoded, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)}
    for form in list(found):
        escaped = json.dumps(form)[1:-1]
        found |= {escaped, escaped.replace("/", "\\/")}
    return {form for form in found if form}


def basic_auth(user: str, password: str) -> str:
    """The Authorization value httpx sends for a URL's (or BasicAuth's) credentials."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def credential_forms(url: str) -> list[str]:
    """The secrets of a URL's userinfo as a request carries them: the userinfo as written and decoded, the password
    as written and decoded, and the Basic authorization they become (the whole value, and its base64 alone).
    The user name alone is no secret when a password follows it; a user name without a password (often a token,
    https://TOKEN@host) is one."""
    credentials = split_credentials(url)[1]
    if credentials is None:
        return []
    user, password = credentials
    written = str(url).split("://", 1)[-1].split("/", 1)[0].rpartition("@")[0]
    authorization = basic_auth(user, password)
    found = [written, f"{user}:{password}", authorization, authorization.removeprefix("Basic ")]
    found += [written.partition(":")[2], password] if ":" in written else [written, user]
    return found


def header_secrets(headers: Mapping[str, str] | Iterable[str]) -> list[str]:
    """Each header value (all of an admin's headers are secrets) and each long word of it: "Bearer <token>"
    echoed as the token alone, "Basic <base64>" as the base64 alone."""
    values = headers.values() if isinstance(headers, Mapping) else headers
    found: list[str] = []
    for value in values:
        found.append(value)
        found += [word for word in str(value).split() if len(word) >= SECRET_WORD_FROM]
    return found


class Redactor:
    """Masks the given secrets, in every form of them (`forms_of`), in a text: call it on a server's text before
    cutting or quoting it."""

    def __init__(self, secrets: Iterable[str | None], *, mask: str = MASK) -> None:
        self.mask = mask
        found: set[str] = set()
        for secret in secrets:
            if secret and isinstance(secret, str):
                found |= forms_of(secret)
        # Longest first: "ab" inside "abc", the whole "Basic …" before its base64.
        self._forms = sorted(found, key=len, reverse=True)
        self._pattern = re.compile("|".join(_alternative(s) for s in self._forms)) if found else None

    @classmethod
    def for_request(
        cls,
        *,
        url: str = "",
        headers: Mapping[str, str] | None = None,
        secrets: Iterable[str | None] = (),
        mask: str = MASK,
    ) -> Redactor:
        """For what one request carries: `url`'s credentials (and their Basic authorization) and its secret query
        values, every value of `headers` (an admin's secret headers), and `secrets` (an API key)."""
        found = [*credential_forms(url), *secret_query_values(url), *header_secrets(headers or {}), *secrets]
        return cls(found, mask=mask)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str, *, cut: bool = False) -> str:
        """`text` with every secret masked. `cut`: the text is the start of a longer one (a body read up to a
        limit), so its end may hold the first characters of a secret: those are masked too."""
        if self._pattern is None:
            return text
        text = self._pattern.sub(lambda _: self.mask, text)
        if cut:
            text = self._without_secret_start(text)
        return text

    def _without_secret_start(self, text: str) -> str:
        """`text` with its end masked when it is the start of a secret (the longest such end)."""
        longest = 0
        for form in self._forms:
            if len(form) >= MASK_ANYWHERE_FROM:
                longest = max(longest, _start_at_end(text, form))
        return text[: len(text) - longest] + self.mask if longest else text


def _start_at_end(text: str, form: str) -> int:
    """The length of the longest start of `form` (short of all of it) that `text` ends with."""
    for size in range(min(len(form) - 1, len(text)), 0, -1):
        if text.endswith(form[:size]):
            return size
    return 0


def _alternative(secret: str) -> str:
    escaped = re.escape(secret)
    if len(secret) >= MASK_ANYWHERE_FROM:
        return escaped
    return f"(?<!{_WORD_CHAR}){escaped}(?!{_WORD_CHAR})"
