"""The one shared httpx.AsyncClient that every provider sends through.

An AsyncClient belongs to the event loop that first used it, so the cache is per loop:
Daphne has one loop for the process; tests may run several, one after another.

It reads through `StreamingTransport` (providers/transport.py), several times cheaper per chunk than httpx's
own transport; `httpcore` switches back to httpx's (HTTP/2, SOCKS and the like): the app passes its
AGENTWEB_LLM_TRANSPORT setting in (providers/config.py build_provider's `transport`).
With a proxy named in the environment (HTTPS_PROXY, ...) the client is httpx's own, which reads those variables
and NO_PROXY itself (it does so only for transports it makes).
"""

from __future__ import annotations

import asyncio
import urllib.request
import weakref

import httpx

from .transport import StreamingTransport

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=10.0)
LIMITS = httpx.Limits(max_connections=200, max_keepalive_connections=50)
TRANSPORTS = ("streaming", "httpcore")
OLD_NAMES = {"aiohttp": "streaming"}  # for a few days the default transport was aiohttp under httpx
# Each event loop's shared client (its connections belong to the loop that opened them), forgotten with the loop:
# per process by nature, and kept here because providers/ is plain Python, with no app to own it.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def get_http_client(transport: str = "streaming") -> httpx.AsyncClient:
    """This loop's shared client, made with `transport` (the app's AGENTWEB_LLM_TRANSPORT) when it has none."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = new_http_client(transport)
        _clients[loop] = client
    return client


async def close_http_client() -> None:
    """Close this loop's shared client, if it has one: its connections go now rather than when the garbage
    collector finds them. For code that ends a loop it ran, such as each test's."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


def new_http_client(transport: str = "streaming", timeout: httpx.Timeout = DEFAULT_TIMEOUT) -> httpx.AsyncClient:
    transport = OLD_NAMES.get(transport, transport)
    if transport not in TRANSPORTS:
        raise ValueError(f"AGENTWEB_LLM_TRANSPORT must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    if transport == "httpcore" or proxies_in_environment():
        # httpx reads the proxy variables (and NO_PROXY) itself only when it makes its own transport.
        return httpx.AsyncClient(timeout=timeout, limits=LIMITS, follow_redirects=False)
    return httpx.AsyncClient(
        timeout=timeout,
        transport=StreamingTransport(
            max_connections=LIMITS.max_connections, max_idle_per_origin=LIMITS.max_keepalive_connections
        ),
        follow_redirects=False,
    )


def proxies_in_environment() -> bool:
    """Whether HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (or their lower-case forms) name a proxy."""
    return any(scheme != "no" for scheme in urllib.request.getproxies())
