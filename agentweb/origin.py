"""Websockets are opened only from the site's own pages: the Origin rule of Django's CSRF check for POSTs.

Channels' AllowedHostsOriginValidator compares host names only, so a page served from another port or scheme of an
allowed host (`http://127.0.0.1:9999`, anything else running on that machine) could open /ws/chat/ with the
person's cookie and act for them. Here the whole origin (scheme, host, port) must be the site's own, as the
request's Host header and scheme give it, or one of CSRF_TRUSTED_ORIGINS (`https://*.example.com` for subdomains).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain


class SameOriginValidator:
    """ASGI middleware for websockets: refuses (HTTP 403) a handshake whose Origin is not allowed."""

    def __init__(self, application):
        self.application = application
        self.deny = WebsocketDenier.as_asgi()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await self.deny(scope, receive, send)
        return await self.application(scope, receive, send)


def origin_allowed(scope) -> bool:
    meta = header_meta(scope)
    origin = meta.get("HTTP_ORIGIN")
    if not origin:
        return False  # browsers always send one on a websocket handshake
    if origin == own_origin(scope, meta) or origin in trusted_exact():
        return True
    try:
        parsed = urlsplit(origin)
    except ValueError:
        return False
    return any(is_same_domain(parsed.netloc, netloc) for netloc in trusted_subdomains(parsed.scheme))


def header_meta(scope) -> dict[str, str]:
    """The handshake's headers named as Django's request.META names them (HTTP_ORIGIN, HTTP_X_FORWARDED_PROTO)."""
    meta: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        key = "HTTP_" + name.decode("latin1").upper().replace("-", "_")
        text = value.decode("latin1")
        meta[key] = f"{meta[key]},{text}" if key in meta else text
    return meta


def own_origin(scope, meta: dict[str, str]) -> str | None:
    """`scheme://host[:port]` of the site as this request reached it, when its Host is an allowed host."""
    host = meta.get("HTTP_HOST", "")
    allowed_hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = [".localhost", "127.0.0.1", "[::1]"]  # as Django's request.get_host()
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, allowed_hosts):
        return None
    return f"{site_scheme(scope, meta)}://{host}"


def site_scheme(scope, meta: dict[str, str]) -> str:
    """https or http, as Django's request.scheme decides it (a TLS proxy's header when configured)."""
    if settings.SECURE_PROXY_SSL_HEADER:
        header, secure_value = settings.SECURE_PROXY_SSL_HEADER
        value = meta.get(header)
        if value is not None:
            return "https" if value.split(",", 1)[0].strip() == secure_value else "http"
    return "https" if scope.get("scheme") in ("wss", "https") else "http"


def trusted_exact() -> set[str]:
    return {origin for origin in settings.CSRF_TRUSTED_ORIGINS if "*" not in origin}


def trusted_subdomains(scheme: str) -> list[str]:
    """The netlocs (`.example.com`) of CSRF_TRUSTED_ORIGINS like `https://*.example.com` for this scheme."""
    entries = (urlsplit(origin) for origin in settings.CSRF_TRUSTED_ORIGINS if "*" in origin)
    return [entry.netloc.lstrip("*") for entry in entries if entry.scheme == scheme]
