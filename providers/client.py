"""The one shared httpx.AsyncClient that every provider sends through.

An AsyncClient belongs to the event loop that first used it, so the cache is per loop:
Daphne has one loop for the process; tests may run several, one after another.

It reads through `ModelServerTransport` (providers/transport.py: aiohttp under httpx, about half the CPU per chunk
of httpx's own transport); `AGENTWEB_LLM_TRANSPORT=httpcore` switches to httpx's own (HTTP/2, SOCKS proxies and the
like). HTTP proxies named in the environment (HTTPS_PROXY, ...) are used by both.
"""

from __future__ import annotations

import asyncio
import os
import weakref

import httpx

from .transport import ModelServerTransport

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=10.0)
LIMITS = httpx.Limits(max_connections=200, max_keepalive_connections=50)
TRANSPORTS = ("aiohttp", "httpcore")
OLD_NAMES = {"streaming": "aiohttp"}  # agentweb's own HTTP/1.1 transport, before aiohttp took its place
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def get_http_client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = new_http_client(os.environ.get("AGENTWEB_LLM_TRANSPORT") or "aiohttp")
        _clients[loop] = client
    return client


async def close_http_client() -> None:
    """Close this loop's shared client, if it has one: its connections go now rather than when the garbage
    collector finds them (aiohttp then complains of an unclosed session). For code that ends a loop it ran,
    such as each test's."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


def new_http_client(transport: str = "aiohttp", timeout: httpx.Timeout = DEFAULT_TIMEOUT) -> httpx.AsyncClient:
    transport = OLD_NAMES.get(transport, transport)
    if transport not in TRANSPORTS:
        raise ValueError(f"AGENTWEB_LLM_TRANSPORT must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    if transport == "httpcore":
        return httpx.AsyncClient(timeout=timeout, limits=LIMITS, follow_redirects=False)
    return httpx.AsyncClient(timeout=timeout, transport=ModelServerTransport(LIMITS), follow_redirects=False)
