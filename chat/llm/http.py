"""The one shared httpx.AsyncClient that every provider sends through.

An AsyncClient belongs to the event loop that first used it, so the cache is per loop:
Daphne has one loop for the process; tests may run several, one after another.
"""

from __future__ import annotations

import asyncio
import weakref

import httpx

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=10.0)
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def get_http_client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            timeout=DEFAULT_TIMEOUT,
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
            follow_redirects=False,
        )
        _clients[loop] = client
    return client
