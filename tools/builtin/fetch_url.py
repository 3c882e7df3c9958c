"""fetch_url: read a public web page or JSON document as text, through the SSRF guard of tools/net.py.

Hosts the guard would refuse (say, an intranet wiki) can be opened with an allow-list, from the provider the
web app installs (its admin's list plus AGENTWEB_FETCH_ALLOWED_HOSTS: tools/apps.py); without one, none.
"""

import asyncio
import codecs
import json
import re
from collections.abc import Awaitable, Callable

from tools.base import tool
from tools.html_text import html_to_text
from tools.net import MAX_BYTES, Fetched, guarded_request

# Set once by the web app as it starts (tools/apps.py), to read its allow-list (tools/services.py allowed_hosts); None:
# no host is allowed.
ALLOWED_HOSTS_PROVIDER: Callable[[], Awaitable[set[str]]] | None = None
DEADLINE_SECONDS = 20.0  # the whole fetch, redirects included; below the tool's own 30 s timeout
MAX_CHARS_LIMIT = 100_000
_JSON_TYPE = re.compile(r"^application/(?:[\w.+-]+\+)?json$")
_TEXT_TYPES = {"application/xml", "application/javascript", "application/x-yaml", "application/yaml"}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w.:-]+)""", re.IGNORECASE)


@tool(timeout=30.0)
async def fetch_url(url: str, max_chars: int = 20000) -> str:
    """Fetch a web page or document over HTTP(S) and return its readable text.

    HTML is reduced to its text, JSON is pretty-printed. Only public addresses can be fetched.

    Args:
        url: The absolute http:// or https:// URL to fetch.
        max_chars: The most characters of text to return (1-100000); the rest is cut off.
    """
    try:
        async with asyncio.timeout(DEADLINE_SECONDS):
            fetched = await guarded_request("GET", url, allowed_hosts=await allowed_hosts(), max_bytes=MAX_BYTES)
    except TimeoutError:
        raise TimeoutError(f"Fetching {url} took longer than {DEADLINE_SECONDS:g} s.") from None
    return describe(fetched, max(1, min(max_chars, MAX_CHARS_LIMIT)))


async def allowed_hosts() -> set[str]:
    """Host names (or IP literals) that skip the address check."""
    if ALLOWED_HOSTS_PROVIDER is None:
        return set()
    return set(await ALLOWED_HOSTS_PROVIDER())


def describe(fetched: Fetched, max_chars: int) -> str:
    """The text the model reads: where the document came from, then its text. Error statuses raise."""
    content_type = fetched.headers.get("content-type", "")
    media_type = content_type.split(";")[0].strip().lower()
    text = body_text(fetched, media_type)
    if fetched.status_code >= 400:
        raise RuntimeError(f"{fetched.url} answered {fetched.status_code} {fetched.reason}: {text[:500]}")
    notes = []
    if len(text) > max_chars:
        notes.append(f"[cut at {max_chars} of {len(text)} characters]")
        text = text[:max_chars]
    if fetched.truncated:
        notes.append(f"[the download stopped at {MAX_BYTES} bytes]")
    header = [f"URL: {fetched.url}", f"Status: {fetched.status_code} {fetched.reason}".rstrip()]
    if media_type:
        header.append(f"Content-Type: {media_type}")
    return "\n".join(header) + "\n\n" + text + "".join(f"\n{note}" for note in notes)


def body_text(fetched: Fetched, media_type: str) -> str:
    if not _is_text(media_type, fetched.body):
        return f"({len(fetched.body)} bytes of {media_type or 'binary data'}, not shown)"
    text = fetched.body.decode(_encoding(fetched, media_type), errors="replace")
    if media_type in ("text/html", "application/xhtml+xml"):
        return html_to_text(text)
    if _JSON_TYPE.match(media_type) and not fetched.truncated:
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            return text  # not JSON after all: show what came
    return text


def _is_text(media_type: str, body: bytes) -> bool:
    if media_type.startswith("text/") or media_type in _TEXT_TYPES or _JSON_TYPE.match(media_type):
        return True
    if media_type.endswith(("+xml", "+json")) or media_type == "application/xhtml+xml":
        return True
    return not media_type and b"\x00" not in body[:1024]  # no type given: guess from the bytes


def _encoding(fetched: Fetched, media_type: str) -> str:
    """The charset of the Content-Type header, else a <meta charset> of an HTML page, else UTF-8."""
    declared = fetched.headers.get_list("content-type")[:1]
    match = re.search(r"charset=[\"']?([\w.:-]+)", declared[0], re.IGNORECASE) if declared else None
    if match is None and media_type == "text/html":
        found = _META_CHARSET.search(fetched.body[:2048])
        name = found.group(1).decode("ascii") if found else None
    else:
        name = match.group(1) if match else None
    try:
        return codecs.lookup(name).name if name else "utf-8"
    except LookupError:
        return "utf-8"
