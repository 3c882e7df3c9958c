"""How model servers are read: an httpx transport that sends through aiohttp.

At 100 tokens/s a model server sends every token as its own write, so the reader pays its per-read cost thousands of
times a second across a few dozen streams. httpx's own transport (httpcore, h11 parsing every chunk in Python) costs
about twice what aiohttp does here (llhttp in C); docs/performance.md has the figures. Requests, responses, timeouts
and exceptions stay httpx's, so what a provider sees does not depend on the transport. aiohttp does the HTTP:
connections kept alive and pooled, TLS, the `connect` and `read` timeouts (httpx's `write` timeout has no aiohttp
twin), back-pressure, HTTP proxies (also for https:// model servers). This module translates, and:

- raises each failure as the httpx exception that says what happened (a refused connection is a `ConnectError`
  caused by the refusal, a server that closed without answering a `RemoteProtocolError`, ...);
- sends a request again, once, when the kept-alive connection it went out on turns out closed before any answer
  (llama.cpp's server closes each connection right after a streamed answer, though it says keep-alive; aiohttp
  itself resends only idempotent requests, and a model request is a POST);
- sends the headers exactly as httpx built them, names in their case;
- reads the proxies named in the environment (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY) once, as httpx does.

httpx-aiohttp's `AiohttpTransport` (0.2.0) does the translation too, but reports a refused connection, a closed one
and a proxy failure all as `ConnectTimeout`, lets some of aiohttp's exceptions through and sends header names in
lower case. `AGENTWEB_LLM_TRANSPORT=httpcore` reads model servers through httpx's own transport instead, for what
aiohttp does not do (HTTP/2, SOCKS proxies).
"""

from __future__ import annotations

import contextvars
import urllib.request
from collections.abc import AsyncIterator

import aiohttp
import httpx

# Set for the duration of one request: whether aiohttp took a kept-alive connection from its pool for it.
_reused: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("agentweb_connection_reused", default=None)

# What a request sent on a connection the server had already closed fails with.
_STALE = (httpx.RemoteProtocolError, httpx.ReadError)


class ModelServerTransport(httpx.AsyncBaseTransport):
    def __init__(self, limits: httpx.Limits) -> None:
        self._limits = limits
        # Made now rather than with the session: loading the certificate authorities takes a while, which the first
        # request's timeouts should not include. SSL_CERT_FILE and SSL_CERT_DIR are read as httpx reads them.
        self._tls = httpx.create_ssl_context()
        self._session: aiohttp.ClientSession | None = None
        # Read once, as httpx reads them once per client. (aiohttp's own `trust_env` reads them, and ~/.netrc, in a
        # thread for every request: two thread hops before each model request, 5-10 ms on a busy server.)
        self._proxies = urllib.request.getproxies()
        self._proxy_of: dict[tuple[str, str], str | None] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        retry = isinstance(request.stream, httpx.ByteStream)  # a body that can be sent again
        while True:
            reused = [False]
            token = _reused.set(reused)
            try:
                response = await self._send(request)
            except (TimeoutError, aiohttp.ClientError) as exc:
                error = as_httpx_error(exc, request)
                if retry and reused[0] and isinstance(error, _STALE):
                    # A kept-alive connection the server had closed before it read the request: once more, on
                    # another connection.
                    retry = False
                    continue
                raise error from cause_of(exc)
            finally:
                _reused.reset(token)
            return httpx.Response(
                response.status,
                headers=response.raw_headers,
                stream=_Body(response, request),
                extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode()},
            )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _send(self, request: httpx.Request) -> aiohttp.ClientResponse:
        timeouts = request.extensions.get("timeout") or {}
        streamed = not isinstance(request.stream, httpx.ByteStream)
        headers = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in request.headers.raw
            if not (streamed and name.lower() == b"transfer-encoding")  # aiohttp frames a streamed body itself
        ]
        return await self._get_session().request(
            request.method,
            str(request.url),
            headers=headers,
            data=request.stream if streamed else (request.content or None),
            allow_redirects=False,
            proxy=self._proxy_for(request.url),
            timeout=aiohttp.ClientTimeout(
                total=None,
                connect=timeouts.get("pool"),  # aiohttp's `connect` is the wait for a free connection and the connect
                sock_connect=timeouts.get("connect"),
                sock_read=timeouts.get("read"),
            ),
        )

    def _proxy_for(self, url: httpx.URL) -> str | None:
        """The proxy HTTP_PROXY, HTTPS_PROXY or ALL_PROXY name for `url`, unless NO_PROXY exempts its host."""
        key = (url.scheme, url.host)
        if key not in self._proxy_of:
            proxy = self._proxies.get(url.scheme) or self._proxies.get("all")
            exempt = proxy is not None and urllib.request.proxy_bypass_environment(url.host, self._proxies)
            self._proxy_of[key] = None if exempt else proxy
        return self._proxy_of[key]

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:  # made on first use, inside the event loop that will own it
            connector = aiohttp.TCPConnector(
                limit=self._limits.max_connections or 0,
                keepalive_timeout=self._limits.keepalive_expiry or 0,
                ssl=self._tls,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=False,  # httpx decodes
                skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent", "Content-Type"),  # httpx's go out
                trace_configs=[_reuse_trace()],
            )
        return self._session


class _Body(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():  # what has arrived, as one piece
                yield chunk
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise as_httpx_error(exc, self._request) from cause_of(exc)

    async def aclose(self) -> None:
        # A body read to its end gives its connection back to the pool; one left unread closes it.
        self._response.release()
        await self._response.wait_for_close()


def as_httpx_error(error: BaseException, request: httpx.Request) -> httpx.TransportError:
    """The httpx exception for what aiohttp raised."""
    message = str(error) or type(error).__name__
    if isinstance(error, aiohttp.ConnectionTimeoutError):  # connecting, or waiting for a free connection
        return httpx.ConnectTimeout(message, request=request)
    if isinstance(error, (aiohttp.SocketTimeoutError, TimeoutError)):
        return httpx.ReadTimeout("Timed out reading the response.", request=request)
    if isinstance(error, (aiohttp.ClientProxyConnectionError, aiohttp.ClientHttpProxyError)):
        return httpx.ProxyError(message, request=request)
    if isinstance(error, aiohttp.ClientConnectorError):
        return httpx.ConnectError(message, request=request)
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
    if isinstance(error, aiohttp.ClientPayloadError):
        return httpx.RemoteProtocolError(
            f"peer closed connection without sending complete message body ({message})", request=request
        )
    if isinstance(error, (aiohttp.NonHttpUrlClientError, aiohttp.InvalidUrlClientError)):
        return httpx.UnsupportedProtocol(message, request=request)
    if isinstance(error, aiohttp.ClientResponseError):  # what aiohttp's parser could not read as HTTP
        return httpx.RemoteProtocolError(f"Malformed HTTP response: {error.message}", request=request)
    if isinstance(error, aiohttp.ClientOSError):
        return httpx.ReadError(message, request=request)
    return httpx.TransportError(message, request=request)


def cause_of(error: BaseException) -> BaseException:
    """What the httpx exception is raised from: aiohttp's, or for a failed connection the OS's error (so that a
    refusal can be told from other failures)."""
    if isinstance(error, aiohttp.ClientConnectorError) and not isinstance(error, aiohttp.ClientProxyConnectionError):
        return error.os_error
    return error


def _reuse_trace() -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()

    async def reused(session, context, params) -> None:
        flag = _reused.get()
        if flag is not None:
            flag[0] = True

    trace.on_connection_reuseconn.append(reused)
    return trace
