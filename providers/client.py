"""The one shared httpx.AsyncClient that every provider sends through.

An AsyncClient belongs to the event loop that first used it, so the cache is per loop:
Daphne has one loop for the process; tests may run several, one after another.

It reads through `StreamingTransport` (providers/transport.py), several times cheaper per chunk than httpx's
own transport; `AGENTWEB_LLM_TRANSPORT=httpcore` switches back to httpx's (HTTP/2, SOCKS and the like).
Proxies named in the environment (HTTPS_PROXY, ...) go through httpx's own transport either way.
"""

from __future__ import annotations

import asyncio
import os
import weakref

import httpx

from .transport import StreamingTransport

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=10.0)
LIMITS = httpx.Limits(max_connections=200, max_keepalive_connections=50)
TRANSPORTS = ("streaming", "httpcore")
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def get_http_client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = new_http_client(os.environ.get("AGENTWEB_LLM_TRANSPORT") or "streaming")
        _clients[loop] = client
    return client


def new_http_client(transport: str = "streaming", timeout: httpx.Timeout = DEFAULT_TIMEOUT) -> httpx.AsyncClient:
    if transport not in TRANSPORTS:
        raise ValueError(f"AGENTWEB_LLM_TRANSPORT must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    if transport == "httpcore":
        return httpx.AsyncClient(timeout=timeout, limits=LIMITS, follow_redirects=False)
    return httpx.AsyncClient(
        timeout=timeout,
        transport=StreamingTransport(
            max_connections=LIMITS.max_connections, max_idle_per_origin=LIMITS.max_keepalive_connections
        ),
        mounts=environment_proxies(),
        follow_redirects=False,
    )


def environment_proxies() -> dict[str, httpx.AsyncBaseTransport | None]:
    """HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY as httpx reads them, through httpx's own transport.
    (httpx reads them only when it makes the transport itself; a None mount sends NO_PROXY hosts direct.)"""
    from httpx._utils import get_environment_proxies  # the pinned httpx's reading of the variables

    return {
        pattern: None if url is None else httpx.AsyncHTTPTransport(proxy=url)
        for pattern, url in get_environment_proxies().items()
    }
