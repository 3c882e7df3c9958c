"""One MCP server's connection, owned by one long-lived task.

The owner task enters the SDK's context managers (transport, ``mcp.Client``) and exits them itself, and every
call runs in a task of the owner's task group: no cancel scope is ever entered in one task and left in another
("attempted to exit cancel scope in a different task" cannot happen). A caller hands its call over through a
queue and waits on a future; when the caller is cancelled (Stop, the deadline) the call's own cancel scope is
cancelled, and the SDK tells the server with ``notifications/cancelled``.

States: connecting → connected (tool list, server name/version) → failed (the error, when it retries) →
connecting … A server that exits or drops (a call that finds the connection closed, a ping that gets no answer)
is connected again with exponential backoff; meanwhile calls fail at once with a message saying so. The last
known tool list is kept through failures, so listing never waits for a connection.

Runs on the MCP loop of tools/mcp/manager.py, never on the app's.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from providers.secrets import Redactor
from tools.executor import ToolFailure
from tools.mcp.config import McpServerConfig

__all__ = [
    "Backoff",
    "McpCallFailed",
    "McpUnavailable",
    "ServerConnection",
    "ServerState",
    "describe",
    "list_tools_once",
    "unavailable_message",
]

log = logging.getLogger("agentweb.tools.mcp")

# ping is the liveness check of handshake-era sessions; the SDK marks it deprecated for the 2026 protocol only.
warnings.filterwarnings("ignore", message="ping is removed", category=MCPDeprecationWarning)

# "personal": a server each person connects to (tools/mcp/personal.py): no shared connection; its tools are the
# list the last person's connection saw.
Status = Literal["connecting", "connected", "failed", "stopped", "personal"]
MAX_ERROR = 1000  # characters of a failure's text kept (a server's error may quote a whole page, or the request)
MAX_STDERR = 400  # characters of a stdio server's standard error in a connection's error
MAX_STDERR_KEPT = 256 * 1024  # bytes of it kept while the server runs
MAX_PAGES = 100  # tools/list pages: a paginator that never ends cannot hang a connection
CLIENT_INFO = types.Implementation(name="agentweb", version="0.1.0")
# An HTTP server may hold a response stream open for a long call: the read timeout is the call's own deadline.
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=None)


class McpUnavailable(ToolFailure):
    """The call was not sent: the server is not connected (or not configured in this process)."""


class McpCallFailed(ToolFailure):
    """The call was sent but failed: the server answered with a protocol error or the connection was lost."""


class ConnectionLost(Exception):
    pass


@dataclass(frozen=True)
class Backoff:
    first: float = 1.0
    most: float = 60.0
    ping_interval: float = 15.0  # seconds between liveness checks of an idle connection


@dataclass(frozen=True)
class ServerState:
    name: str
    status: Status = "connecting"
    tools: tuple[types.Tool, ...] = ()  # the last known list, kept while failed
    server_name: str = ""
    server_version: str = ""
    error: str = ""
    retry_at: float | None = None  # time.time() of the next attempt, while failed
    since: float = field(default_factory=time.time)


ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
ElicitFn = Callable[[str, dict], Awaitable[Any]]  # returns an ElicitationAnswer
HoldFn = Callable[[], Callable[[], None]]  # stops the caller's timeout clock; returns what starts it again


@dataclass(eq=False)
class _Call:
    tool: str
    args: dict[str, Any]
    future: asyncio.Future
    on_progress: ProgressFn | None = None
    on_elicit: ElicitFn | None = None
    on_hold: HoldFn | None = None
    scope: anyio.CancelScope | None = None
    cancelled: bool = False
    asking: int = 0  # the server's questions shown on this call's card now

    def cancel(self) -> None:
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()

    def fail(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)


class ServerConnection:
    def __init__(
        self,
        config: McpServerConfig,
        *,
        on_change: Callable[[ServerState], None],
        backoff: Backoff | None = None,
        auth: httpx2.Auth | None = None,
    ):
        self.config = config
        self.auth = auth  # an HTTP server's auth besides its headers (a person's OAuth: tools/mcp/oauth.py)
        self.last_error: BaseException | None = None  # why the last connection ended (a person's token refused?)
        self.state = ServerState(config.name)
        self.backoff = backoff or Backoff()
        self._on_change = on_change
        self._requests: asyncio.Queue[_Call] = asyncio.Queue()
        self._in_flight: list[_Call] = []  # in the order they started: an elicitation goes to the oldest
        self._refresh = asyncio.Event()
        self._retry_now = asyncio.Event()
        self._scope: anyio.CancelScope | None = None
        self._task: asyncio.Task | None = None
        self._stopping = False
        self._stderr: Any = None  # a stdio server's standard error, for the error of a failed connection

    # --- lifetime (on the MCP loop) -----------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._own(), name=f"mcp:{self.config.name}")

    async def stop(self) -> None:
        """Close the connection (a stdio server's process is ended by the SDK, every wait bounded)."""
        self._stopping = True
        if self._scope is not None:
            self._scope.cancel()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    def reconnect_now(self) -> None:
        """Skip the rest of the backoff wait (a configuration change, an admin's request)."""
        self._retry_now.set()

    # --- calls ------------------------------------------------------------------------

    async def call(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        on_progress: ProgressFn | None,
        on_elicit: ElicitFn | None,
        on_hold: HoldFn | None = None,
    ) -> types.CallToolResult:
        """Run one tools/call through the owner task. Raises McpUnavailable, McpCallFailed, or CancelledError.

        ``on_hold`` stops the caller's timeout clock while a question of the server is open (see _elicit)."""
        if self.state.status != "connected":
            raise McpUnavailable(self.unavailable_message())
        call = _Call(tool, args, asyncio.get_running_loop().create_future(), on_progress, on_elicit, on_hold)
        self._requests.put_nowait(call)
        try:
            return await call.future
        except asyncio.CancelledError:
            call.cancel()  # the SDK sends notifications/cancelled as the call's scope unwinds
            raise

    def unavailable_message(self) -> str:
        return unavailable_message(self.config.name, self.state)

    # --- the owner --------------------------------------------------------------------

    async def _own(self) -> None:
        delay = self.backoff.first
        with anyio.CancelScope() as self._scope:
            while not self._stopping:
                self._set(status="connecting", error="", retry_at=None)
                try:
                    await self._session()
                    error = "the connection ended"
                except Exception as exc:  # every failure of a connection is reported, none ends the owner
                    self.last_error = exc
                    error = describe(exc, self.config)
                error += self._last_words()
                log.info("MCP server %s: %s", self.config.name, error)
                if self.state.status == "connected":
                    delay = self.backoff.first  # it had worked: start the backoff again
                self._fail_pending(f"The connection to MCP server {self.config.name!r} was lost: {error}")
                self._set(status="failed", error=error, retry_at=time.time() + delay)
                self._retry_now.clear()
                with anyio.move_on_after(delay):
                    await self._retry_now.wait()
                delay = min(delay * 2, self.backoff.most)
        self._fail_pending(f"MCP server {self.config.name!r} was stopped.")
        self._set(status="stopped", retry_at=None)
        if self._stderr is not None:
            self._stderr.close()

    async def _session(self) -> None:
        # One scope around the whole connection (never one that ends before the contexts it encloses): its deadline
        # bounds connecting and the first listing, then is lifted.
        with anyio.CancelScope(deadline=anyio.current_time() + self.config.timeout) as connecting:
            async with AsyncExitStack() as stack:
                client = await self._open(stack)
                tools = await self._list_tools(client)
                connecting.deadline = math.inf
                info = client.server_info
                self._set(
                    status="connected",
                    tools=tools,
                    server_name=info.name if info else "",
                    server_version=info.version if info else "",
                    error="",
                )
                log.info("MCP server %s connected: %d tools", self.config.name, len(tools))
                await self._serve(client)
        if connecting.cancelled_caught:
            raise TimeoutError(f"no answer within {self.config.timeout:g} s while connecting")

    async def _open(self, stack: AsyncExitStack) -> Client:
        config = self.config
        if config.transport == "stdio":
            parameters = stdio_parameters(config)
            if shutil.which(config.command, path=parameters.env["PATH"]) is None:
                raise FileNotFoundError(f"the command {config.command!r} is not found on PATH")
            if self._stderr is not None:
                self._stderr.close()
            # Kept open past the connection (its error is read after the SDK's contexts have closed).
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            transport = stdio_client(parameters, errlog=self._stderr)
        else:
            http_client = httpx2.AsyncClient(headers=dict(config.headers), timeout=HTTP_TIMEOUT, auth=self.auth)
            http = await stack.enter_async_context(http_client)
            transport = streamable_http_client(config.url, http_client=http)
        client = Client(
            transport,
            # The handshake every MCP server speaks (2025 protocol): cancellation by notifications/cancelled,
            # notifications/tools/list_changed, elicitation and progress as requests and notifications.
            mode="legacy",
            cache=None,
            client_info=CLIENT_INFO,
            message_handler=self._on_message,
            elicitation_callback=self._elicit,
        )
        return await stack.enter_async_context(client)

    async def _list_tools(self, client: Client) -> tuple[types.Tool, ...]:
        found: list[types.Tool] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            found.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tuple(found)

    async def _serve(self, client: Client) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch, client)
            group.start_soon(self._refresher, client)
            while True:
                call = await self._requests.get()
                if not call.cancelled:
                    group.start_soon(self._run_call, client, call)

    async def _run_call(self, client: Client, call: _Call) -> None:
        self._in_flight.append(call)
        try:
            with anyio.CancelScope() as call.scope:
                if call.cancelled:
                    call.scope.cancel()
                try:
                    result = await client.call_tool(call.tool, call.args, progress_callback=call.on_progress)
                except MCPError as exc:
                    if exc.code == types.CONNECTION_CLOSED:
                        lost = f"MCP server {self.config.name!r} closed the connection during the call."
                        call.fail(McpCallFailed(lost))
                        raise ConnectionLost("the server closed the connection") from None
                    error = describe(exc, self.config)
                    call.fail(McpCallFailed(f"MCP server {self.config.name!r} answered with an error: {error}"))
                    return
                except Exception as exc:  # a transport failure, an answer the SDK cannot read
                    error = describe(exc, self.config)
                    call.fail(McpCallFailed(f"The call to MCP server {self.config.name!r} failed: {error}"))
                    return
                if not call.future.done():
                    call.future.set_result(result)
        finally:
            self._in_flight.remove(call)
            # Cancelled with the connection (its transport failed: a person's token refused, say): the caller is
            # told now, not left waiting for its deadline.
            call.fail(McpCallFailed(f"The connection to MCP server {self.config.name!r} ended during the call."))

    async def _watch(self, client: Client) -> None:
        """A server that exits or drops while idle is noticed by the next ping."""
        while True:
            await anyio.sleep(self.backoff.ping_interval)
            self._trim_stderr()
            try:
                with anyio.fail_after(min(self.config.timeout, 30.0)):
                    await client.session.send_ping()
            except (MCPError, TimeoutError) as exc:
                raise ConnectionLost(f"the server stopped answering ({describe(exc, self.config)})") from None

    async def _refresher(self, client: Client) -> None:
        while True:
            await self._refresh.wait()
            self._refresh.clear()
            tools = await self._list_tools(client)
            self._set(tools=tools)
            log.info("MCP server %s: tool list changed, %d tools", self.config.name, len(tools))

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._refresh.set()
        elif isinstance(message, Exception):
            log.debug("MCP server %s: transport reported %r", self.config.name, message)

    async def _elicit(self, context: Any, params: Any) -> types.ElicitResult | types.ErrorData:
        """The server asks the person for input: the call it belongs to shows the form (declined when it cannot).

        The 2025 protocol does not say which request an elicitation belongs to: one of the calls in flight when it
        came. The form goes to the oldest of them that can ask and shows no other question of this server (else the
        oldest that can ask): two calls that each ask get a form each. A call that gets its result while its card
        shows the question was not the one asking: the form moves to the next of them. And none of their timeouts
        counts while the question is open (before, the form was on one card and the call that asked timed out).
        """
        if not isinstance(params, types.ElicitRequestFormParams):
            return types.ElicitResult(action="decline")
        owners = [c for c in self._in_flight if c.on_elicit is not None]
        releases = [c.on_hold() for c in self._in_flight if c.on_hold is not None]
        asked = False
        try:
            while owners := [c for c in owners if c in self._in_flight]:
                call = next((c for c in owners if not c.asking), owners[0])
                answer, asked = await self._ask(call, params), True
                if answer is None and _answered(call):
                    owners.remove(call)
                    continue  # the question was on the card of a call that has its result: shown on the next one
                if answer is None:
                    return types.ElicitResult(action="cancel")
                if isinstance(answer, types.ErrorData):
                    return answer
                content = answer.content if answer.action == "accept" else None
                return types.ElicitResult(action=answer.action, content=content)
            # No call left to ask through: declined, or cancelled once it was shown (the calls ended meanwhile).
            return types.ElicitResult(action="cancel" if asked else "decline")
        finally:
            for release in releases:
                release()

    async def _ask(self, call: _Call, params: types.ElicitRequestFormParams) -> Any:
        """The person's answer through ``call``'s card; None when the call ended meanwhile, ErrorData when the
        schema cannot be shown as a form."""
        assert call.on_elicit is not None
        call.asking += 1
        try:
            answer = await call.on_elicit(params.message, params.requested_schema)
        except ValueError as exc:  # a schema the app cannot show as a form
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"The client cannot ask for this: {exc}")
        except asyncio.CancelledError:
            if _being_cancelled():  # the SDK's own scope (the server withdrew its question, the session closes)
                raise
            # The question was withdrawn because its call ended (a result, its deadline, Stop). Let out, a
            # CancelledError that no scope of the SDK's caught would cancel the session's whole task group: the
            # connection was lost, and the next calls failed without asking anything.
            return None
        finally:
            call.asking -= 1
        if answer.action == "cancel" and _answered(call):
            return None  # closed because its call ended with a result (the run's side closes it too)
        return answer

    def _trim_stderr(self) -> None:
        """A server that logs to its standard error for days must not fill the disk: only its end is kept."""
        stderr = self._stderr
        try:
            if stderr is None or os.fstat(stderr.fileno()).st_size <= MAX_STDERR_KEPT:
                return
            # The file's offset is shared with the server's process: it writes on after what is kept.
            stderr.seek(0)
            tail = stderr.read()[-MAX_STDERR:]
            stderr.seek(0)
            stderr.truncate()
            stderr.write(tail)
            stderr.flush()
        except (OSError, ValueError):
            pass

    def _last_words(self) -> str:
        """The end of what a stdio server wrote to its standard error, which often says why it stopped."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            text = self._stderr.read()[-MAX_STDERR:].strip()
            self._stderr.seek(0)
            self._stderr.truncate()
        except (OSError, ValueError):
            return ""
        return f"; its standard error ended with: {mask(text, self.config)}" if text else ""

    # --- state ------------------------------------------------------------------------

    def _set(self, **changes: Any) -> None:
        if "status" in changes and changes["status"] != self.state.status:
            changes["since"] = time.time()
        self.state = replace(self.state, **changes)
        self._on_change(self.state)

    def _fail_pending(self, message: str) -> None:
        for call in list(self._in_flight):
            call.fail(McpCallFailed(message))
        while not self._requests.empty():
            self._requests.get_nowait().fail(McpUnavailable(message))


def _answered(call: _Call) -> bool:
    """Whether the server has answered ``call`` (with its result or an error), not the caller given up on it."""
    return call.future.done() and not call.cancelled


def _being_cancelled() -> bool:
    """Whether this task itself was cancelled (an anyio scope, a task.cancel()), not just an awaited future."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def list_tools_once(config: McpServerConfig, *, auth: httpx2.Auth | None = None) -> tuple[types.Tool, ...]:
    """Connect to an HTTP server once, list its tools and close: a person's key checked, an OAuth sign-in made
    (``auth`` then waits for the person: no deadline here, the caller bounds it)."""
    async with AsyncExitStack() as stack:
        http_client = httpx2.AsyncClient(headers=dict(config.headers), timeout=HTTP_TIMEOUT, auth=auth)
        http = await stack.enter_async_context(http_client)
        transport = streamable_http_client(config.url, http_client=http)
        client = Client(transport, mode="legacy", cache=None, client_info=CLIENT_INFO)
        client = await stack.enter_async_context(client)
        found: list[types.Tool] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            found.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tuple(found)


def unavailable_message(name: str, state: ServerState | None) -> str:
    """Why a call of server ``name``'s tool cannot be sent now, for the model."""
    if state is not None and state.status == "failed":
        wait = max(0, round((state.retry_at or time.time()) - time.time()))
        return (
            f"MCP server {name!r} is not connected ({state.error}); the app tries again in {wait} s. "
            "Tell the user, or do without this tool."
        )
    if state is not None and state.status == "stopped":
        return f"MCP server {name!r} is stopped in this process."
    if state is not None and state.status == "personal":
        return f"MCP server {name!r}: its tools are not known yet (nobody has connected to it); try again later."
    return f"MCP server {name!r} is still connecting; try again in a moment."


def stdio_parameters(config: McpServerConfig) -> StdioServerParameters:
    """The server's process gets only the environment its configuration names, plus PATH to find the command.

    The SDK adds HOME, USER, SHELL and a few more to every stdio server's environment; ``env -u`` takes back the
    ones the configuration does not name. (Values never go on the command line, where other users could read
    them: ``env`` only receives the names to drop.)
    """
    env = {"PATH": os.environ.get("PATH", os.defpath), **config.env}
    program = shutil.which("env") if sys.platform != "win32" else None
    if program is None:
        return StdioServerParameters(command=config.command, args=list(config.args), env=env)
    drop = [name for name in DEFAULT_INHERITED_ENV_VARS if name not in env and name in os.environ]
    unset = [arg for name in drop for arg in ("-u", name)]
    return StdioServerParameters(command=program, args=[*unset, "--", config.command, *config.args], env=env)


def describe(exc: BaseException, config: McpServerConfig | None = None) -> str:
    """One line for a failure, the innermost cause of a task group's exception group: with ``config``, its secrets
    masked (mask), and at most MAX_ERROR characters of it."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        text = exc.error.message if exc.error else str(exc)
    else:
        text = str(exc) or type(exc).__name__
        if isinstance(exc, OSError | httpx2.HTTPError | TimeoutError) and type(exc).__name__ not in text:
            text = f"{type(exc).__name__}: {text}"
    text = mask(text, config) if config is not None else text  # masked before it is cut: no secret's start is left
    return text if len(text) <= MAX_ERROR else text[:MAX_ERROR] + "…"


def mask(text: str, config: McpServerConfig) -> str:
    """``text`` without the server's secrets, in any form the app sent them in (providers/secrets.py): its headers'
    values, its environment's values, its URL's credentials (and the Basic authorization they become) and the values
    of its URL's secret query parameters (?token=…)."""
    redact = Redactor.for_request(url=config.url, headers=config.headers, secrets=config.env.values(), mask="••••")
    return redact(text)
