"""An HTTP/1.1 transport for httpx, made for reading model streams cheaply.

At 100 tokens/s a model server sends every token as its own write, so the reader pays its per-read cost
thousands of times a second across a few dozen streams. httpx's own transport (httpcore over anyio, h11
parsing every chunk in Python) spends about 85 µs of CPU per read here, most of what a whole relay costs;
this transport spends about 12: an `asyncio.Protocol` whose bytes go straight into llhttp (through
`httptools`, the parser uvicorn uses), with one future per wait and no timer per read.

It plugs into `httpx.AsyncClient(transport=...)`, so requests, responses, timeouts and exceptions are httpx's:
what a provider sees does not change. What it does:

- HTTP/1.1 over TCP or TLS, keep-alive connections pooled per origin (idle ones dropped after
  `keepalive_expiry` seconds, as httpcore does), at most `max_connections` open at once (`pool` timeout);
  a request whose kept-alive connection turns out closed before any answer came is sent again on a new one
  (once, and only with a body that can be sent again);
- the `connect`, `write` and `read` timeouts of the request (`read`: no byte for that long while the
  caller waits), raised as httpx's exceptions, like every failure (`ConnectError`, `ReadError`,
  `RemoteProtocolError`, ...);
- bodies chunked, sized or ended by the connection closing; what has arrived by the time the caller reads is
  handed over as one piece; reading stops (TCP back-pressure) while more than `HIGH_WATER` bytes wait.

What it does not: HTTP/2, proxies (with a proxy named in the environment the client is httpx's own, so those
still work; providers/client.py), Unix sockets. `AGENTWEB_LLM_TRANSPORT=httpcore` switches back to
httpx's transport for model servers that need them.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Any

import httptools
import httpx

Origin = tuple[str, str, int]  # scheme, host, port
DEFAULT_PORTS = {"http": 80, "https": 443}
HIGH_WATER = 256 * 1024  # bytes received and not yet read that pause reading from the socket


class StreamingTransport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        *,
        max_connections: int = 200,
        max_idle_per_origin: int = 50,
        keepalive_expiry: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._slots = asyncio.Semaphore(max_connections)
        self._max_idle = max_idle_per_origin
        self._expiry = keepalive_expiry
        self._ssl_context = ssl_context
        self._idle: dict[Origin, deque[_Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise RuntimeError("the transport is closed")
        url = request.url
        scheme = url.scheme
        if scheme not in DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme}://'.", request=request)
        if not url.host:
            raise httpx.UnsupportedProtocol("Request URL is missing a host.", request=request)
        origin = (scheme, url.host, url.port or DEFAULT_PORTS[scheme])
        timeouts = request.extensions.get("timeout") or {}
        try:
            async with asyncio.timeout(timeouts.get("pool")):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("Timed out waiting for a free connection.", request=request) from None
        connection = None
        try:
            connection = self._reuse(origin)
            if connection is not None:
                try:
                    head = await self._exchange(connection, request, timeouts)
                except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
                    # A kept-alive connection the server closed before it saw the request (servers close idle
                    # ones when they like; llama.cpp's closes each right after a streamed answer, though it
                    # says keep-alive): no answer began, so the request goes again on a new connection.
                    if connection.response_started or not isinstance(request.stream, httpx.ByteStream):
                        raise
                    connection.close()
                    connection = None
            if connection is None:
                connection = await self._connect(origin, timeouts.get("connect"), request)
                head = await self._exchange(connection, request, timeouts)
        except BaseException:
            if connection is not None:
                connection.close()
            self._slots.release()
            raise
        status, headers, reason = head
        return httpx.Response(
            status,
            headers=headers,
            stream=_ResponseBody(self, origin, connection, timeouts.get("read"), request),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

    @staticmethod
    async def _exchange(
        connection: _Connection, request: httpx.Request, timeouts: dict[str, Any]
    ) -> tuple[int, list, bytes]:
        """Send the request on `connection`, then read the response's head."""
        await connection.send(request, timeouts.get("write"))
        return await connection.read_head(timeouts.get("read"), request)

    async def aclose(self) -> None:
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    # --- the pool ----------------------------------------------------------------------------------

    def _reuse(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        if not idle:
            return None
        now = asyncio.get_running_loop().time()
        while idle:
            connection = idle.pop()  # the most recently used: the least likely to have been closed by the server
            if connection.reusable() and now - connection.idle_since < self._expiry:
                return connection
            connection.close()
        return None

    def _release(self, origin: Origin, connection: _Connection, reusable: bool) -> None:
        self._slots.release()
        if not reusable or self._closed or not connection.reusable():
            connection.close()
            return
        idle = self._idle.setdefault(origin, deque())
        if len(idle) >= self._max_idle:
            idle.popleft().close()
        connection.idle_since = asyncio.get_running_loop().time()
        idle.append(connection)

    async def _connect(self, origin: Origin, timeout: float | None, request: httpx.Request) -> _Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        tls = self._tls() if scheme == "https" else None
        try:
            async with asyncio.timeout(timeout):
                _, connection = await loop.create_connection(
                    _Connection, host, port, ssl=tls, server_hostname=host if tls else None
                )
        except TimeoutError:
            raise httpx.ConnectTimeout("Timed out connecting.", request=request) from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from exc
        return connection

    def _tls(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = httpx.create_ssl_context()
        return self._ssl_context


class _ResponseBody(httpx.AsyncByteStream):
    def __init__(
        self,
        transport: StreamingTransport,
        origin: Origin,
        connection: _Connection,
        timeout: float | None,
        request: httpx.Request,
    ) -> None:
        self._transport = transport
        self._origin = origin
        self._connection = connection
        self._timeout = timeout
        self._request = request
        self._released = False

    async def __aiter__(self):
        connection = self._connection
        while True:
            data = connection.take()
            if data:
                yield data
            elif connection.complete:
                return
            else:
                await connection.wait(self._timeout, self._request)

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            connection = self._connection
            # A body not read to its end leaves the connection mid-message: it cannot carry another request.
            self._transport._release(self._origin, connection, connection.complete and connection.keep_alive)


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: writes a request, parses the response as it arrives."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._parser: Any = None
        self._head: asyncio.Future | None = None
        self._waiter: asyncio.Future | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self._wait_started = 0.0
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._reading_paused = False
        self._writable: asyncio.Future | None = None
        self._error: Exception | None = None
        self._headers: list[tuple[bytes, bytes]] = []
        self._reason = b""
        self._ends_at_close = False
        self._head_request = False
        self._lost = False
        self.complete = False
        self.keep_alive = False
        self.idle_since = 0.0
        #: Bytes of a response to the current request have arrived.
        self.response_started = False

    # --- used by the transport -----------------------------------------------------------------------

    def reusable(self) -> bool:
        transport = self._transport
        return not self._lost and self._error is None and transport is not None and not transport.is_closing()

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._transport is not None:
            self._transport.close()

    async def send(self, request: httpx.Request, timeout: float | None) -> None:
        self._start_message(request.method)
        head = [b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), request.url.raw_path)]
        for name, value in request.headers.raw:
            head.append(b"%s: %s\r\n" % (name, value))
        head.append(b"\r\n")
        chunked = request.headers.get("transfer-encoding", "").lower() == "chunked"
        try:
            async with asyncio.timeout(timeout):
                self._write(b"".join(head))
                async for part in request.stream:
                    if part:
                        self._write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
                        await self._drain(request)
                if chunked:
                    self._write(b"0\r\n\r\n")
                await self._drain(request)
        except TimeoutError:
            raise httpx.WriteTimeout("Timed out sending the request.", request=request) from None

    async def read_head(self, timeout: float | None, request: httpx.Request) -> tuple[int, list, bytes]:
        assert self._head is not None
        try:
            async with asyncio.timeout(timeout):
                return await self._head
        except TimeoutError:
            raise httpx.ReadTimeout("Timed out waiting for the response.", request=request) from None

    def take(self) -> bytes:
        chunks = self._chunks
        if not chunks:
            if self._error is not None and not self.complete:
                raise self._error
            return b""
        self._chunks = []
        self._buffered = 0
        if self._reading_paused and self._transport is not None:
            self._reading_paused = False
            self._transport.resume_reading()
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def wait(self, timeout: float | None, request: httpx.Request) -> None:
        """Until more of the body, its end or an error arrives; `timeout` seconds without any is a ReadTimeout."""
        if self._error is not None or self.complete:
            return
        waiter = self._waiter = self._loop.create_future()
        if timeout is not None:
            # One timer re-armed from the time the current wait began, rather than one timer per read.
            self._wait_started = self._loop.time()
            if self._watchdog is None:
                self._watchdog = self._loop.call_at(self._wait_started + timeout, self._check_quiet, timeout, request)
        try:
            await waiter
        finally:
            self._waiter = None

    # --- asyncio.Protocol --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._parser is None:  # bytes from an idle connection: the server is not speaking HTTP to us
            self._fail(httpx.RemoteProtocolError("Received data on an idle connection."))
            self.close()
            return
        self.response_started = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(httpx.RemoteProtocolError("The server switched protocols."))
            self.close()
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"Malformed HTTP response: {exc}"))
            self.close()

    def eof_received(self) -> bool:
        self._ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if exc is not None and not self.complete:
            self._fail(httpx.ReadError(str(exc) or type(exc).__name__))
        else:
            self._ended()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        self._writable = self._loop.create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    # --- httptools callbacks -------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.complete:  # bytes after the end of the response: this connection cannot be trusted again
            self._lost = True

    def on_status(self, reason: bytes) -> None:
        self._reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an interim response (100 Continue, 103 Early Hints): the real one follows
            self._headers = []
            self._reason = b""
            return
        if self._head is None or self._head.done():
            return  # a second response after the first one ended (on_message_begin marked the connection)
        names = {name.lower() for name, _ in self._headers}
        self._ends_at_close = b"content-length" not in names and b"transfer-encoding" not in names
        self._head.set_result((status, self._headers, self._reason))
        if self._head_request:  # the answer to HEAD has no body whatever its headers say
            self.complete = True
            self.keep_alive = False

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > HIGH_WATER and not self._reading_paused and self._transport is not None:
            self._reading_paused = True
            self._transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._head is None or not self._head.done() or self.complete:
            return  # the end of an interim response, or of a second one
        self.complete = True
        self.keep_alive = self._parser.should_keep_alive()
        self._parser = None
        self._wake()

    # --- inside --------------------------------------------------------------------------------------

    def _start_message(self, method: str) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._head_request = method == "HEAD"
        self._parser = httptools.HttpResponseParser(self)
        self._head = self._loop.create_future()
        self._chunks = []
        self._buffered = 0
        self._headers = []
        self._reason = b""
        self._ends_at_close = False
        self.complete = False
        self.keep_alive = False
        self.response_started = False

    def _write(self, data: bytes) -> None:
        if self._lost or self._transport is None or self._transport.is_closing():
            raise self._error or httpx.WriteError("The connection closed while sending the request.")
        self._transport.write(data)

    async def _drain(self, request: httpx.Request) -> None:
        if self._writable is not None:
            await self._writable
        if self._lost:
            raise httpx.WriteError("The connection closed while sending the request.", request=request)

    def _ended(self) -> None:
        """The server closed its side: the end of a close-delimited body, otherwise a broken response."""
        if self.complete or self._parser is None:
            self._lost = True
            return
        if self._head is not None and self._head.done() and self._ends_at_close:
            self.complete = True
            self.keep_alive = False
            self._parser = None
            self._wake()
        elif self._head is not None and self._head.done():
            self._fail(httpx.RemoteProtocolError("peer closed connection without sending complete message body"))
        else:
            self._fail(httpx.RemoteProtocolError("Server disconnected without sending a response."))

    def _fail(self, error: Exception) -> None:
        if self._error is None:
            self._error = error
        head = self._head
        if head is not None and not head.done():
            head.set_exception(error)
            head.exception()  # retrieved here: read_head may never look (a failed send), and that is no bug
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _check_quiet(self, timeout: float, request: httpx.Request) -> None:
        self._watchdog = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return  # nobody is waiting: the next wait arms the timer again
        quiet_until = self._wait_started + timeout
        if self._loop.time() >= quiet_until:
            waiter.set_exception(httpx.ReadTimeout("Timed out reading the response.", request=request))
        else:
            self._watchdog = self._loop.call_at(quiet_until, self._check_quiet, timeout, request)
