"""The MCP connections of this process, on a thread and event loop of their own.

Each process (a Daphne process, a run worker, a management command) keeps its own connections: one per server, in
the McpManager the tools app makes as it starts (tools/apps.py; tools.services.mcp_connections). They live on the MCP
loop, a daemon thread started on first need, so that

- a call can come from any event loop: Daphne's, a worker's, the loop ``async_to_sync`` makes for the admin's
  try-it page, a test's; the caller waits on a future and its cancellation crosses back as a cancellation;
- connecting, pinging and reconnecting never take time on the app's loop, and a server that is down delays
  nothing that does not call it: reading the tool lists is a dict lookup under a lock;
- the process's exit closes them all (atexit: stdio servers' processes are ended, none is left behind).

``configure`` is idempotent and never waits: a run's tool set calls it with the servers the database and
AGENTWEB_MCP_CONFIG describe, and the connections follow in the background.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from tools.context import ToolContext
from tools.mcp.config import McpServerConfig
from tools.mcp.connection import Backoff, McpCallFailed, McpUnavailable, ServerConnection, ServerState
from tools.mcp.oauth import provider_for_calls
from tools.mcp.personal import CredentialSource, McpNeedsConnection, PersonalCredential, PersonHeader, is_refusal
from tools.mcp.results import Converted, convert_result

__all__ = ["McpManager"]

log = logging.getLogger("agentweb.tools.mcp")

STOP_SECONDS = 10.0
PERSONAL_IDLE = 300.0  # seconds a person's connection is kept unused before it is closed
CONNECT_ATTEMPTS = 3  # a call asks a person to connect at most this many times


@dataclass(eq=False)
class _Personal:
    """One person's connection to a server each person connects to (tools/mcp/personal.py)."""

    connection: ServerConnection
    stamp: str
    key: tuple
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    refused: bool = False  # the server asked the person to authorize again
    last_used: float = field(default_factory=time.monotonic)


class McpManager:
    def __init__(self, *, backoff: Backoff | None = None):
        self.backoff = backoff or Backoff()
        self._lock = threading.Lock()
        self._configs: dict[str, McpServerConfig] = {}
        self._states: dict[str, ServerState] = {}
        self._connections: dict[str, ServerConnection] = {}  # touched on the MCP loop only
        self._personal: dict[tuple[str, int], _Personal] = {}  # (server, person): the MCP loop only
        # Where the people's credentials are (the mcpconnect app sets it as it starts); None: no per-person servers.
        self.credentials: CredentialSource | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # Counts the changes of any server's tool list: part of the key of the tool sets a process keeps.
        self.generation = 0

    # --- any thread ----------------------------------------------------------------------

    def configure(self, configs: Iterable[McpServerConfig]) -> None:
        """Connect the enabled servers of ``configs`` and close the others. Returns at once."""
        wanted = {config.name: config for config in configs if config.enabled}
        with self._lock:
            for name, config in wanted.items():  # a server each person connects to whose tools are still unknown
                state = self._states.get(name)
                if config.per_person and state is not None and state.status == "personal" and not state.tools:
                    tools = self._known_tools(config)
                    if tools:
                        self._states[name] = replace(state, tools=tools)
                        self.generation += 1
            if wanted == self._configs:
                return
            self._configs = wanted
            for name in set(self._states) - set(wanted):
                del self._states[name]
            for name, config in wanted.items():
                if config.per_person:
                    if self._states.get(name, ServerState(name)).status != "personal":
                        self._states[name] = ServerState(name, status="personal", tools=self._known_tools(config))
                else:
                    if self._states.get(name, ServerState(name)).status == "personal":
                        del self._states[name]
                    self._states.setdefault(name, ServerState(name))
            self.generation += 1
            loop = self._start_loop()
        loop.call_soon_threadsafe(self._reconcile)

    def states(self) -> dict[str, ServerState]:
        """The state of every configured, enabled server, as this process sees it now."""
        with self._lock:
            return dict(self._states)

    def state(self, name: str) -> ServerState | None:
        with self._lock:
            return self._states.get(name)

    async def call(self, server: str, tool: str, args: dict[str, Any], context: ToolContext | None) -> Converted:
        """Call ``tool`` of ``server`` from any event loop. Raises McpUnavailable (McpNeedsConnection),
        McpCallFailed, CancelledError."""
        with self._lock:
            loop, config = self._loop, self._configs.get(server)
        if loop is None or config is None:
            raise McpUnavailable(f"MCP server {server!r} is not configured or is disabled.")
        if config.per_person:
            return convert_result(await self._call_as_person(loop, config, tool, args, context))
        return convert_result(await self._on_mcp_loop(loop, context, lambda b: self._call_here(server, tool, args, b)))

    def submit(self, coroutine: Coroutine) -> Future:
        """Run ``coroutine`` on the MCP loop (a person connecting: mcpconnect/flows.py); its future."""
        with self._lock:
            loop = self._start_loop()
        return asyncio.run_coroutine_threadsafe(coroutine, loop)

    def forget_person(self, server: str | None, user_id: int) -> None:
        """Close this process's connections of person ``user_id`` (to ``server``, or to every server): they
        disconnected, or their account was deactivated. Returns at once."""
        with self._lock:
            loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._drop_person, server, user_id)

    async def _on_mcp_loop(self, loop: asyncio.AbstractEventLoop, context: ToolContext | None, make) -> Any:
        bridge = _Bridge(asyncio.get_running_loop(), context)
        handle = asyncio.run_coroutine_threadsafe(make(bridge), loop)
        try:
            return await asyncio.wrap_future(handle)
        finally:
            handle.cancel()  # no-op when done; else the call's task on the MCP loop is cancelled
            bridge.close()

    async def _call_as_person(
        self,
        loop: asyncio.AbstractEventLoop,
        config: McpServerConfig,
        tool: str,
        args: dict,
        context: ToolContext | None,
    ) -> Any:
        """A call of a server each person connects to, over the connection of the person the call runs for."""
        user_id = context.user.id if context is not None and context.user is not None else None
        if user_id is None:
            raise McpNeedsConnection(
                f"MCP server {config.name!r} is used with each person's own account, and this call runs for nobody."
            )
        source = self.credentials
        if source is None:
            raise McpUnavailable(f"MCP server {config.name!r}: each person connects to it, which this app cannot do.")
        for _ in range(CONNECT_ATTEMPTS):
            credential = await source.credential(config, user_id)
            if credential is None:
                await self._ask_to_connect(config, user_id, context)
                continue
            try:
                return await self._on_mcp_loop(
                    loop, context, lambda b, c=credential: self._call_personal(config, user_id, c, tool, args, b)
                )
            except McpNeedsConnection:
                await source.refused(config, user_id, credential.stamp)
        raise McpNeedsConnection(
            f"MCP server {config.name!r} refused this person's account again; the tool was not called."
        )

    async def _ask_to_connect(self, config: McpServerConfig, user_id: int, context: ToolContext | None) -> None:
        how = "sign in with their account" if config.per_person == "oauth" else "enter their key"
        if context is None or context.connect is None:
            raise McpNeedsConnection(
                f"MCP server {config.name!r} is used with each person's own account, and this person has not "
                f"connected theirs: they {how} from the Tools panel (Connect), then ask again."
            )
        source = self.credentials
        assert source is not None

        async def check() -> bool:
            return await source.credential(config, user_id) is not None

        if not await context.connect(config.name, config.per_person, check):
            raise McpNeedsConnection(
                f"The person did not connect their account to MCP server {config.name!r}; the tool was not called."
            )

    def shutdown(self, timeout: float = STOP_SECONDS) -> None:
        """Close every connection (stdio servers' processes ended) and stop the MCP loop. Idempotent."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
            self._configs = {}
            self._states = {}
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop_all(), loop).result(timeout)
        except Exception:  # a server that would not stop in time: the daemon thread ends with the process
            log.warning("MCP connections did not all close within %g s", timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)

    # --- the MCP loop ---------------------------------------------------------------------

    def _start_loop(self) -> asyncio.AbstractEventLoop:
        """Called under the lock."""
        if self._loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()
                loop.close()

            self._thread = threading.Thread(target=run, name="mcp-connections", daemon=True)
            self._thread.start()
            ready.wait()
            self._loop = loop
            atexit.register(self.shutdown)
        return self._loop

    def _reconcile(self) -> None:
        with self._lock:
            wanted = dict(self._configs)
        for name, connection in list(self._connections.items()):
            config = wanted.get(name)
            if config is None or config.connection_key() != connection.config.connection_key():
                del self._connections[name]
                asyncio.get_running_loop().create_task(connection.stop())
            else:
                connection.config = config  # timeout, approval, offered tools: the connection stays
        for key, entry in list(self._personal.items()):
            config = wanted.get(key[0])
            if config is None or not config.per_person or config.connection_key() != entry.key:
                self._drop(key, entry)
        for name, config in wanted.items():
            if config.per_person:
                continue  # no shared connection: each person's own, made by their first call
            if name not in self._connections:
                connection = ServerConnection(config, on_change=self._changed, backoff=self.backoff)
                self._connections[name] = connection
                connection.start()

    def _changed(self, state: ServerState) -> None:
        with self._lock:
            config = self._configs.get(state.name)
            if config is None or config.per_person:
                return  # a connection being closed reports its end
            before = self._states.get(state.name)
            self._states[state.name] = state
            if before is None or before.tools != state.tools:
                self.generation += 1

    async def _call_here(self, server: str, tool: str, args: dict[str, Any], bridge: _Bridge) -> Any:
        connection = self._connections.get(server)
        if connection is None:
            raise McpUnavailable(f"MCP server {server!r} is not configured or is disabled.")
        return await connection.call(
            tool,
            args,
            on_progress=bridge.progress if bridge.context and bridge.context.report_progress else None,
            on_elicit=bridge.elicit if bridge.context and bridge.context.elicit else None,
            on_hold=bridge.hold if bridge.context and bridge.context.pause_timeout else None,
        )

    async def _stop_all(self) -> None:
        connections, self._connections = list(self._connections.values()), {}
        personal, self._personal = [p.connection for p in self._personal.values()], {}
        await asyncio.gather(*(c.stop() for c in [*connections, *personal]), return_exceptions=True)

    # --- people's own connections (the MCP loop) -----------------------------------------

    async def _call_personal(
        self,
        config: McpServerConfig,
        user_id: int,
        credential: PersonalCredential,
        tool: str,
        args: dict[str, Any],
        bridge: _Bridge,
    ) -> Any:
        """Raises McpNeedsConnection when the server refuses the person's credential."""
        self._close_idle()
        key = (config.name, user_id)
        entry = self._personal.get(key)
        if entry is not None and (
            entry.stamp != credential.stamp
            or entry.key != config.connection_key()
            or entry.connection.state.status in ("failed", "stopped")
        ):
            self._drop(key, entry)
            entry = None
        if entry is None:
            entry = self._open_personal(config, user_id, credential)
        entry.last_used = time.monotonic()
        try:
            async with asyncio.timeout(config.timeout):
                await entry.ready.wait()
        except TimeoutError:
            self._drop(key, entry)
            message = f"MCP server {config.name!r}: no answer within {config.timeout:g} s while connecting"
            raise McpUnavailable(message) from None
        connection = entry.connection
        if connection.state.status != "connected":
            self._drop(key, entry)
            if entry.refused or is_refusal(connection.last_error):
                raise McpNeedsConnection(f"MCP server {config.name!r} refused this person's account.")
            raise McpUnavailable(f"MCP server {config.name!r} is not connected ({connection.state.error}).")
        try:
            return await connection.call(
                tool,
                args,
                on_progress=bridge.progress if bridge.context and bridge.context.report_progress else None,
                on_elicit=bridge.elicit if bridge.context and bridge.context.elicit else None,
                on_hold=bridge.hold if bridge.context and bridge.context.pause_timeout else None,
            )
        except (McpCallFailed, McpUnavailable):
            if entry.refused or is_refusal(connection.last_error):
                self._drop(key, entry)
                raise McpNeedsConnection(f"MCP server {config.name!r} refused this person's account.") from None
            raise

    def _open_personal(self, config: McpServerConfig, user_id: int, credential: PersonalCredential) -> _Personal:
        used = config
        holder: dict[str, _Personal] = {}

        def refused() -> None:
            holder["entry"].refused = True

        if config.per_person == "header":
            # Masked in errors like the configured headers (tools/mcp/connection.py mask), but sent by the auth.
            used = replace(config, headers={**config.headers, config.person_header: credential.header_value})
            auth = PersonHeader(config.person_header, credential.header_value, on_refused=refused)
        else:
            auth = provider_for_calls(config.url, credential.storage, credential.redirect_uri, on_refused=refused)
        key = (config.name, user_id)

        def changed(state: ServerState) -> None:
            entry = holder["entry"]
            if state.status in ("connected", "failed", "stopped"):
                entry.ready.set()
            if state.status == "failed" and self._personal.get(key) is entry:
                self._drop(key, entry)  # no retrying with a person's credential: the next call opens another
            if state.status == "connected" and state.tools:
                self._learned_tools(config, state)

        # The person's connection never retries by itself: failed, it is dropped, and the next call opens another.
        connection = ServerConnection(used, on_change=changed, backoff=self.backoff, auth=auth)
        entry = _Personal(connection=connection, stamp=credential.stamp, key=config.connection_key())
        holder["entry"] = entry
        self._personal[key] = entry
        connection.start()
        return entry

    def learn_tools(self, config: McpServerConfig, tools: tuple) -> None:
        """A person's connecting listed the server's tools (mcpconnect/flows.py): the tools runs are offered."""
        self._learned_tools(config, ServerState(config.name, status="connected", tools=tuple(tools)), remember=False)

    def _learned_tools(self, config: McpServerConfig, state: ServerState, *, remember: bool = True) -> None:
        with self._lock:
            shared = self._states.get(config.name)
            if shared is None or shared.status != "personal":
                return
            if shared.tools != state.tools:
                self._states[config.name] = replace(
                    shared, tools=state.tools, server_name=state.server_name, server_version=state.server_version
                )
                self.generation += 1
        if remember and self.credentials is not None:
            task = asyncio.get_running_loop().create_task(self.credentials.remember_tools(config, state.tools))
            task.add_done_callback(_log_failure)

    def _known_tools(self, config: McpServerConfig) -> tuple:
        """Called under the lock: the tools a person's connection listed, in any process."""
        if self.credentials is None:
            return ()
        try:
            return tuple(self.credentials.known_tools(config))
        except Exception:  # a database not migrated yet: none known
            log.warning("MCP server %s: its known tools could not be read", config.name, exc_info=True)
            return ()

    def _drop(self, key: tuple, entry: _Personal) -> None:
        if self._personal.get(key) is entry:
            del self._personal[key]
        entry.ready.set()
        asyncio.get_running_loop().create_task(entry.connection.stop())

    def _drop_person(self, server: str | None, user_id: int) -> None:
        for key, entry in list(self._personal.items()):
            if key[1] == user_id and (server is None or key[0] == server):
                self._drop(key, entry)

    def _close_idle(self) -> None:
        now = time.monotonic()
        for key, entry in list(self._personal.items()):
            if now - entry.last_used > PERSONAL_IDLE:
                self._drop(key, entry)


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("MCP: remembering a tool list failed: %s", task.exception())


class _Bridge:
    """The caller's progress and elicitation callbacks, called from the MCP loop, run on the caller's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, context: ToolContext | None):
        self.loop = loop
        self.context = context
        self.questions: set[Future] = set()

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        # Not awaited: a slow status line must not hold the server's notifications back.
        assert self.context is not None and self.context.report_progress is not None
        asyncio.run_coroutine_threadsafe(self.context.report_progress(progress, total, message), self.loop)

    async def elicit(self, message: str, schema: dict) -> Any:
        assert self.context is not None and self.context.elicit is not None
        handle = asyncio.run_coroutine_threadsafe(self.context.elicit(message, schema), self.loop)
        self.questions.add(handle)
        try:
            return await asyncio.wrap_future(handle)
        finally:
            self.questions.discard(handle)

    def hold(self) -> Callable[[], None]:
        """Stop the call's timeout clock (on the caller's loop) until the returned function is called."""
        assert self.context is not None and self.context.pause_timeout is not None
        pause, releases = self.context.pause_timeout, []

        def on_caller_loop(action: Callable[[], None]) -> None:
            with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nothing is left to time out
                self.loop.call_soon_threadsafe(action)

        # In order on the caller's loop: the release always runs after the pause it ends.
        on_caller_loop(lambda: releases.append(pause()))
        return lambda: on_caller_loop(lambda: releases and releases.pop()())

    def close(self) -> None:
        """The call is over: a question still waiting for the person is withdrawn."""
        for handle in list(self.questions):
            handle.cancel()
