"""HTTP tools defined in the admin, turned into ordinary ``Tool`` objects.

A call renders the URL and the body from the (already validated) arguments and sends the request through
the SSRF guard of fetch_url (tools/net.py): the host resolved once, every address checked, the connection
made to the checked address, every redirect checked again, and the headers dropped on a redirect to another
origin. The response comes back as text. Header values never appear in results, errors or logs: they are
masked even when the server echoes them back. Headers that are stored encrypted and cannot be decrypted (an
``UnreadableSecret``: the key that encrypted them is not configured) make every call fail with that problem,
naming the tool; the request is not sent.

Plain Python: a row is read through its attributes, so nothing here imports the ORM.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from agentweb.secretbox import UnreadableSecret
from providers.secrets import Redactor, basic_auth, split_credentials
from tools.base import Tool, tool
from tools.net import BlockedURL, Fetched, guarded_request

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_RESPONSE_BYTES",
    "HttpToolError",
    "build_http_tool",
    "render_body",
    "render_url",
]

logger = logging.getLogger("agentweb.tools.http")

DEFAULT_TIMEOUT = 30.0
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
MASK = "••••"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}")
_BODY_METHODS = {"POST", "PUT", "PATCH"}


class HttpToolError(Exception):
    """What the model reads when the request could not be made or the server answered with an error."""


class HttpToolRow(Protocol):
    """The attributes of tools.models.HttpTool that a tool is built from."""

    name: str
    description: str
    parameters: dict
    method: str
    url_template: str
    headers: dict | UnreadableSecret
    body_template: str
    requires_approval: bool
    timeout: float | None


# --- templates ------------------------------------------------------------------------


def url_placeholders(template: str) -> set[str]:
    return set(_PLACEHOLDER.findall(template))


def body_placeholders(template: str) -> set[str]:
    return set(_PLACEHOLDER.findall(template))


def render_url(template: str, args: Mapping[str, Any]) -> str:
    """Each ``{name}`` becomes the URL-quoted argument ('/' too); a missing one becomes empty."""
    return _PLACEHOLDER.sub(lambda match: quote(_url_text(args.get(match.group(1))), safe=""), template)


def _url_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)  # true, 5, [1,2] as the JSON the model wrote


def render_body(template: str, args: Mapping[str, Any]) -> Any:
    """Fill a JSON template and parse it. Raises ValueError when the result is not JSON.

    A placeholder in value position becomes the argument as JSON (a missing one ``null``); inside a JSON
    string it becomes the argument's text, escaped (a missing one nothing).
    """
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(template):
        char = template[i]
        match = _PLACEHOLDER.match(template, i) if char == "{" else None
        if match:
            value = args.get(match.group(1))
            out.append(_string_fragment(value) if in_string else json.dumps(value, ensure_ascii=False))
            i = match.end()
            continue
        if in_string and char == "\\":
            out.append(template[i : i + 2])
            i += 2
            continue
        if char == '"':
            in_string = not in_string
        out.append(char)
        i += 1
    text = "".join(out)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"The body template is not valid JSON once filled in: {exc.msg} (character {exc.pos})."
        ) from None


def _string_fragment(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return json.dumps(text, ensure_ascii=False)[1:-1]


# --- the tool -------------------------------------------------------------------------


def build_http_tool(row: HttpToolRow, *, allowed_hosts: Iterable[str] = ()) -> Tool:
    """A Tool that performs the request ``row`` describes. ``allowed_hosts`` open hosts the SSRF guard refuses."""
    timeout = float(row.timeout or DEFAULT_TIMEOUT)
    if isinstance(row.headers, UnreadableSecret):
        problem = UnreadableSecret.problem(f"The headers of HTTP tool {row.name!r}")

        async def call_http_tool(**args: Any) -> str:
            logger.warning("%s", problem)
            raise HttpToolError(problem)

    else:
        request = _RequestTemplate(
            method=row.method.upper(),
            url_template=row.url_template,
            body_template=row.body_template or "",
            headers=dict(row.headers or {}),
            timeout=timeout,
            allowed_hosts=frozenset(allowed_hosts),
        )

        async def call_http_tool(**args: Any) -> str:
            return await request.send(args)

    return tool(
        name=row.name,
        description=row.description,
        parameters=row.parameters,
        requires_approval=row.requires_approval,
        timeout=timeout,
    )(call_http_tool)


class _RequestTemplate:
    def __init__(self, *, method, url_template, body_template, headers, timeout, allowed_hosts):
        # A URL written with `user:password@` (the admin refuses it now; older rows may hold one) is sent as basic
        # auth to the bare URL, so the credentials are masked like any header and no error or log shows the URL's.
        self.url_template, credentials = split_credentials(url_template)
        if credentials is not None and not any(name.lower() == "authorization" for name in headers):
            headers = {**headers, "Authorization": basic_auth(*credentials)}
        self.method = method
        self.body_template = body_template
        self.headers = headers
        self.timeout = timeout
        self.allowed_hosts = allowed_hosts
        # Every header value, in every form a server may echo it in (providers/secrets.py), and the URL's password.
        self.mask = Redactor.for_request(url=url_template, headers=headers, mask=MASK)

    async def send(self, args: dict[str, Any]) -> str:
        try:
            return self.mask(await self._send(args))
        except (HttpToolError, BlockedURL) as exc:
            raise HttpToolError(self.mask(str(exc))) from None
        except httpx.HTTPError as exc:
            # from None: the chained exception holds the request, and with it the secret headers.
            raise HttpToolError(self.mask(f"The request failed: {type(exc).__name__}: {exc}")) from None

    async def _send(self, args: dict[str, Any]) -> str:
        url = httpx.URL(render_url(self.url_template, args))
        params, body = self._rest(args)
        if params:
            url = url.copy_merge_params(params)
        headers = dict(self.headers)
        content = None
        if body is not None:
            content = json.dumps(body, ensure_ascii=False).encode()
            headers["Content-Type"] = "application/json"
        logger.debug("HTTP tool request %s to %s", self.method, url.host)
        fetched = await guarded_request(
            self.method,
            str(url),
            headers=headers,
            content=content,
            allowed_hosts=self.allowed_hosts,
            max_bytes=MAX_RESPONSE_BYTES,
            timeout=self.timeout,
        )
        return _describe(fetched, self.mask)

    def _rest(self, args: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """Query parameters and JSON body: from the body template, else the arguments the URL did not use."""
        if self.body_template.strip():
            return {}, render_body(self.body_template, args)
        unused = {k: v for k, v in args.items() if k not in url_placeholders(self.url_template) and v is not None}
        if self.method in _BODY_METHODS:
            return {}, (unused or None)
        return {k: _url_text(v) for k, v in unused.items()}, None


def _describe(fetched: Fetched, mask: Redactor) -> str:
    """The response as text, secrets masked: JSON pretty-printed; an error status raises with the body for the model
    to read. A body cut at the limit may end with a secret's first characters: those are masked too."""
    content_type = fetched.headers.get("content-type", "")
    text = fetched.body.decode(_charset(content_type), errors="replace")
    if not fetched.truncated and "json" in content_type:
        with contextlib.suppress(ValueError):
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    text = mask(text, cut=fetched.truncated)
    if fetched.truncated:
        text += f"\n…[response cut at {MAX_RESPONSE_BYTES // (1024 * 1024)} MB]"
    status = f"HTTP {fetched.status_code} {fetched.reason}".rstrip()
    if fetched.status_code >= 400:
        raise HttpToolError(f"{status}: {text}" if text else status)
    return text or f"{status} (empty body)"


def _charset(content_type: str) -> str:
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    if match:
        try:
            return codecs.lookup(match.group(1)).name
        except LookupError:
            pass
    return "utf-8"
