"""The one path every HTTP model provider streams through: timeouts, error messages, what may be retried.

`HTTPProvider` is the base of the OpenAI-compatible, Anthropic and Ollama providers. It sends one POST
through the shared httpx client (or one a test passes in), turns the status line and transport failures
into `ModelServerError`s that name the server and what it answered (never the API key nor the credentials
of the base URL: providers/secrets.py), and bounds the
whole response by a total deadline on top of httpx's connect/read timeouts. A subclass only says what
to send (`request_body`, `request_headers`) and how to read the body (`read_events`: the shared loop of
providers/stream.py with the provider's wire format).

Which failures are retryable (`ModelServerError.retryable`, `retry_after`) is decided here; the retries
themselves are providers/retry.py's `RetryingProvider`.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import errno
import json
import logging
import math
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any

import httpx

from .client import get_http_client
from .context import context_exceeded
from .secrets import Redactor, split_credentials
from .structured import AnswerFormat, final_answer_as_text
from .types import ChatMessage, ModelError, StreamEvent, ToolDefinition

log = logging.getLogger("agentweb.llm")

DEFAULT_TOTAL_TIMEOUT = 600.0  # seconds for one request, from sending it to the last byte of the answer
ERROR_BODY_LIMIT = 2048  # bytes of an error response read for the message; the rest may be a whole HTML page
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})  # 529: Anthropic's "overloaded"
# An error body that says the request itself is wrong: sending it again gets the same answer, whatever the
# status (llama-cpp-python's server answers its pydantic validation errors with a 500).
INVALID_REQUEST_TYPES = frozenset({"invalid_request_error", "BadRequestError", "RequestValidationError"})
INVALID_REQUEST_TEXT = re.compile(r"validation errors? for |'loc': \(|\bInput should be\b|\bfield required\b")
DRAIN_LIMIT = 64 * 1024  # bytes read after the end of an answer to keep its connection (see read_to_end)
DRAIN_GRACE = 1.0  # seconds waited for them
_EXTRA_REASONS = {529: "Overloaded"}
_CONNECTION_FAILURES = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,
)


class ModelServerError(ModelError):
    """A ModelError that also says whether trying again may help, and after how long the server asked."""

    def __init__(
        self, message: str, *, status: int | None = None, retryable: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class HTTPProvider:
    """Base of the providers that stream an answer from a model server over HTTP."""

    is_demo = False
    #: Appended to the base URL, e.g. "/chat/completions".
    path = ""
    #: A 200 with a JSON body is an error for SSE APIs (a proxy's page, or a server ignoring "stream");
    #: for NDJSON it is simply a one-line answer.
    json_answer_is_error = True

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        transport: str = "streaming",
        timeout: float | None = DEFAULT_TOTAL_TIMEOUT,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> None:
        # Credentials in the URL go as basic auth: the URL every text shows (and httpx logs) has none.
        self.base_url, credentials = split_credentials(base_url)
        self.model = model
        self.label = f"{model} · {self.base_url}"
        #: Total seconds for one request, headers to last byte; None: no limit beyond connect/read timeouts.
        self.timeout = timeout
        #: Override the client's connect/read timeouts (the shared client's: 10 s / 300 s) for this provider.
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._api_key = api_key or None
        self._auth = httpx.BasicAuth(*credentials) if credentials else None
        # Every form the request carries them in: the key, the URL's password, the Basic authorization it becomes.
        self._redact = Redactor.for_request(url=base_url, secrets=[api_key])
        self._client = client
        #: How the shared client reads model servers, when no `client` is given (providers/client.py).
        self._transport = transport
        self._url = self.endpoint(self.base_url)

    def __repr__(self) -> str:  # never show the key, not even in a traceback's locals
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    # --- what a subclass provides ----------------------------------------------------------------

    def endpoint(self, base_url: str) -> str:
        return base_url.rstrip("/") + self.path

    def request_body(self, messages: list[ChatMessage], tools: list[ToolDefinition]) -> dict[str, Any]:
        raise NotImplementedError

    def request_headers(self) -> dict[str, str]:
        return {}

    def answers_with_tool(self, answer: AnswerFormat) -> bool:
        """Whether a structured answer is asked for with the final_answer tool (its call then comes back as the
        step's text: providers/structured.py) rather than the server's own structured output. The default: yes."""
        return True

    def _request_body(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: AnswerFormat | None
    ) -> dict[str, Any]:
        if answer is None:
            return self.request_body(messages, tools)
        return self.request_body(messages, tools, answer=answer)

    def ask_again_without(self, error: ModelServerError) -> bool:
        """The server refused the request for an optional part of it (`error`, before any answer): True when that
        part is now left out (`request_body` builds the request without it) and the request is worth sending once
        more. The default: never."""
        return False

    def read_events(self, chunks: AsyncIterator[bytes], tools: list[ToolDefinition]) -> AsyncIterator[StreamEvent]:
        """Neutral events from the body's bytes, as they arrive. Raise `self.error(...)` for a broken stream.
        The three providers return `read_stream(…)` (providers/stream.py) with their wire format's `WireReader`."""
        raise NotImplementedError

    # --- the shared path ---------------------------------------------------------------------------

    async def stream(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: AnswerFormat | None = None
    ) -> AsyncIterator[StreamEvent]:
        """`answer`: the step's answer is a JSON value of that schema (providers/structured.py)."""
        client = self._client or get_http_client(self._transport)
        timeout = self._httpx_timeout(client)
        body = self._request_body(messages, tools, answer)
        deadline = asyncio.get_running_loop().time() + self.timeout if self.timeout else None
        try:
            async with contextlib.AsyncExitStack() as stack:
                async with asyncio.timeout_at(deadline):
                    for attempt in (1, 2):
                        response = await stack.enter_async_context(
                            client.stream(
                                "POST",
                                self._url,
                                json=body,
                                headers=self.request_headers(),
                                auth=self._auth,
                                timeout=timeout,
                            )
                        )
                        try:
                            await self._check_response(response)
                            break
                        except ModelServerError as exc:
                            if attempt == 2 or not self.ask_again_without(exc):
                                raise
                            await response.aclose()
                            body = self._request_body(messages, tools, answer)
                chunks = await stack.enter_async_context(contextlib.aclosing(_until(_body(response), deadline)))
                events = await stack.enter_async_context(contextlib.aclosing(self.read_events(chunks, tools)))
                if answer is not None and self.answers_with_tool(answer):
                    events = await stack.enter_async_context(
                        contextlib.aclosing(final_answer_as_text(events, answer.schema))
                    )
                async for event in events:
                    yield event
                await read_to_end(chunks)
        except TimeoutError:  # the total deadline (asyncio's), not one of httpx's timeouts
            raise self.error(
                f"The model server at {self.base_url} did not finish its answer within {self.timeout:g} s"
                " (total timeout)."
            ) from None
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, timeout) from exc
        except httpx.InvalidURL as exc:
            raise self.error(f"The model server URL {self.base_url!r} is not valid: {exc}") from exc

    def ended_early(self, missing: str) -> ModelServerError:
        """The body ended cleanly before the wire format's own end of an answer (`missing` names it).

        Retryable like a broken connection: the caller retries only while nothing has been shown; after
        that the run fails with the partial text kept, and Retry asks again."""
        return self.error(
            f"The model server at {self.base_url} ended the answer early: the stream closed without {missing}.",
            retryable=True,
        )

    def error(self, message: str, **details: Any) -> ModelServerError:
        # Masked once more as a whole: an exception's text (httpx's, the OS's) may hold a secret too.
        return ModelServerError(self._redact(message), **details)

    def quote(self, text: str) -> str:
        """A server's text, fit to be quoted in an error: secrets masked first, then cut to length (cut first,
        a secret echoed back near the cut would leave its first characters behind: "sk-proj-a1b2…")."""
        return shorten(self._redact(text))

    def _httpx_timeout(self, client: httpx.AsyncClient) -> httpx.Timeout:
        base = client.timeout
        return httpx.Timeout(
            connect=self.connect_timeout if self.connect_timeout is not None else base.connect,
            read=self.read_timeout if self.read_timeout is not None else base.read,
            write=base.write,
            pool=base.pool,
        )

    async def _check_response(self, response: httpx.Response) -> None:
        status = response.status_code
        if status >= 400:
            body = await read_limited(response)
            text = body.decode("utf-8", "replace")
            payload = json_or_none(text)
            detail = self.quote(error_text(payload) or text.strip())
            message = f"The model server at {self.base_url} answered {status_line(response)}"
            full = context_exceeded(payload, detail)
            if full is not None:  # sending it again cannot help: the same conversation would not fit either
                raise self.error(f"{full.message()} ({message}: {detail})", status=status)
            retryable = (
                status in RETRY_STATUSES
                and response.headers.get("x-should-retry") != "false"
                and not says_request_invalid(payload, detail)
            )
            raise self.error(
                f"{message}: {detail}" if detail else f"{message}.",
                status=status,
                retryable=retryable,
                retry_after=retry_after_seconds(response.headers),
            )
        if 300 <= status < 400:
            location = response.headers.get("location", "")
            where = f" to {location}" if location else ""
            raise self.error(
                f"The model server at {self.base_url} answered {status_line(response)}, a redirect{where}:"
                " set the base URL to the address it redirects to.",
                status=status,
            )
        if self.json_answer_is_error and response.headers.get("content-type", "").startswith("application/json"):
            text = (await read_limited(response)).decode("utf-8", "replace")
            detail = self.quote(error_text(json_or_none(text)) or text.strip())
            raise self.error(
                f"The model server at {self.base_url} answered with JSON instead of an event stream"
                f" (does it support streaming?): {detail}"
            )

    def _transport_error(self, exc: httpx.HTTPError, timeout: httpx.Timeout) -> ModelServerError:
        where = f"the model server at {self.base_url}"
        # A connection that could not be made, or broke, is worth another try (if nothing was shown yet);
        # a server that is merely slow is not: waiting for it again would only double the wait.
        retryable = isinstance(exc, _CONNECTION_FAILURES)
        if isinstance(exc, httpx.ConnectTimeout):
            message = f"Timed out connecting to {where}{_after(timeout.connect)}. Is the address right?"
        elif isinstance(exc, httpx.ReadTimeout):
            message = f"The model server at {self.base_url} sent nothing{_after(timeout.read, 'for')} (read timeout)."
        elif isinstance(exc, httpx.TimeoutException):
            message = f"Timed out talking to {where}: {type(exc).__name__}."
        elif isinstance(exc, httpx.ConnectError):
            if is_refused(exc):
                message = f"Could not connect to {where}: connection refused. Is it running?"
            else:
                message = f"Could not connect to {where}: {exc or type(exc).__name__}."
        elif isinstance(exc, httpx.UnsupportedProtocol):
            message = f"The model server URL {self.base_url!r} is not valid: {exc}"
        else:
            message = f"The connection to {where} broke: {exc or type(exc).__name__}."
        return self.error(message, retryable=retryable)


async def read_to_end(chunks: AsyncIterator[bytes]) -> None:
    """What is left of a body after the answer's own end (`[DONE]`, `message_stop`, `done: true`): usually
    just the chunked body's last, empty chunk, which servers write on its own. Reading it lets the kept-alive
    connection carry the next request. Bounded in bytes and time; a server that holds the body open, keeps
    writing or breaks now costs only that connection (the answer is already whole)."""
    left = DRAIN_LIMIT
    with contextlib.suppress(httpx.HTTPError, TimeoutError):
        async with asyncio.timeout(DRAIN_GRACE):
            async for data in chunks:
                left -= len(data)
                if left < 0:
                    return


def _body(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body's bytes: as sent when nothing is content-encoded (one generator fewer per chunk than
    `aiter_bytes`, whose decoder would hand each chunk on unchanged), else decoded."""
    if response.is_stream_consumed:  # a body already read (a test's transport): aiter_bytes replays it
        return response.aiter_bytes()
    if response.headers.get("content-encoding", "identity").strip().lower() in ("", "identity"):
        return response.aiter_raw()
    return response.aiter_bytes()


async def _until(chunks: AsyncIterator[bytes], deadline: float | None) -> AsyncIterator[bytes]:
    """The body's chunks, each awaited under the request's total deadline (TimeoutError when it passes).

    One timer for the whole body rather than an `asyncio.timeout_at` per chunk (a timer scheduled and
    cancelled for every token was a sixth of the relay's CPU): when the deadline passes while a chunk is
    awaited, the task is cancelled as `asyncio.timeout` would; when it passes while the caller is busy with
    the previous chunk, the next read raises at once. httpx's read timeout still bounds each read.
    """
    if deadline is None:
        async for chunk in chunks:
            yield chunk
        return
    guard = _BodyDeadline(deadline)
    try:
        while True:
            if guard.expired:
                raise TimeoutError
            guard.reading = True
            try:
                chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if guard.cancelled_reading():
                    raise TimeoutError from None
                raise
            finally:
                guard.reading = False
            if guard.cancelled:  # the read swallowed the cancellation: the deadline passed all the same
                if guard.cancelled_reading():
                    raise TimeoutError
                raise asyncio.CancelledError
            yield chunk
    finally:
        guard.close()


class _BodyDeadline:
    """The timer behind `_until`: cancels the reading task if the deadline passes during a read."""

    __slots__ = ("_handle", "_task", "cancelled", "expired", "reading")

    def __init__(self, deadline: float) -> None:
        self.reading = False
        self.expired = False
        self.cancelled = False
        self._task = asyncio.current_task()
        self._handle = asyncio.get_running_loop().call_at(deadline, self._fire)

    def _fire(self) -> None:
        self.expired = True
        if self.reading and self._task is not None and not self._task.done():
            self.cancelled = True
            self._task.cancel()

    def cancelled_reading(self) -> bool:
        """Whether a CancelledError out of the read is this deadline's own (and nothing else's)."""
        if not self.cancelled:
            return False
        self.cancelled = False
        assert self._task is not None
        return self._task.uncancel() == 0

    def close(self) -> None:
        self._handle.cancel()


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """The wait a server asks for: `retry-after-ms` (OpenAI, Anthropic), or `Retry-After` in seconds or as a date."""
    milliseconds = _finite(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return max(0.0, milliseconds / 1000)
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    seconds = _finite(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _finite(value: str | None) -> float | None:
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


# --- small helpers the providers share -------------------------------------------------------------


def error_text(payload: Any) -> str | None:
    """The human message in an error body: {"error": {"message": …}}, {"error": "…"}, {"message": …}, {"detail": …}.
    Whole, not cut: the caller masks secrets in it before cutting it (HTTPProvider.quote)."""
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        if message:
            return str(message)
        return json.dumps(error)
    if isinstance(error, str) and error:
        return error
    for key in ("message", "detail"):
        if payload.get(key):
            return str(payload[key])
    return None


def says_request_invalid(payload: Any, detail: str) -> bool:
    """Whether an error answer says the request is invalid (its error type, or a validation error's text)."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and (error.get("type") in INVALID_REQUEST_TYPES or error.get("code") == 422):
        return True
    return bool(INVALID_REQUEST_TEXT.search(detail))


async def read_limited(response: httpx.Response) -> bytes:
    body = bytearray()
    async for data in response.aiter_bytes():
        body += data
        if len(body) >= ERROR_BODY_LIMIT:
            break
    return bytes(body[:ERROR_BODY_LIMIT])


def json_or_none(body: bytes | str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def status_line(response: httpx.Response) -> str:
    status = response.status_code
    reason = response.reason_phrase or _EXTRA_REASONS.get(status) or _reason(status)
    return f"{status} {reason}" if reason else str(status)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _after(seconds: float | None, word: str = "after") -> str:
    return f" {word} {seconds:g} s" if seconds else ""


def shorten(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def is_refused(exc: BaseException) -> bool:
    # httpx wraps the OSError from the socket; walk the chain for ECONNREFUSED rather than parse messages.
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or getattr(seen, "errno", None) == errno.ECONNREFUSED:
            return True
        seen = seen.__cause__ or seen.__context__
    return "refused" in str(exc).lower()
