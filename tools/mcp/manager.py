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
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from tools.context import ToolContext
from tools.mcp.config import McpServerConfig
from tools.mcp.connection import Backoff, McpUnavailable, ServerConnection, ServerState
from tools.mcp.results import Converted, convert_result

__all__ = ["McpManager"]

log = logging.getLogger("agentweb.tools.mcp")

STOP_SECONDS = 10.0


class McpManager:
    def __init__(self, *, backoff: Backoff | None = None):
        self.backoff = backoff or Backoff()
        self._lock = threading.Lock()
        self._configs: dict[str, McpServerConfig] = {}
        self._states: dict[str, ServerState] = {}
        self._connections: dict[str, ServerConnection] = {}  # touched on the MCP loop only
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # Counts the changes of any server's tool list: part of the key of the tool sets a process keeps.
        self.generation = 0

    # --- any thread ----------------------------------------------------------------------

    def configure(self, configs: Iterable[McpServerConfig]) -> None:
        """Connect the enabled servers of ``configs`` and close the others. Returns at once."""
        wanted = {config.name: config for config in configs if config.enabled}
        with self._lock:
            if wanted == self._configs:
                return
            self._configs = wanted
            for name in set(self._states) - set(wanted):
                del self._states[name]
            for name in wanted:
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
        """Call ``tool`` of ``server`` from any event loop. Raises McpUnavailable, McpCallFailed, CancelledError."""
        with self._lock:
            loop, known = self._loop, server in self._configs
        if loop is None or not known:
            raise McpUnavailable(f"MCP server {server!r} is not configured or is disabled.")
        caller = asyncio.get_running_loop()
        bridge = _Bridge(caller, context)
        handle = asyncio.run_coroutine_threadsafe(self._call_here(server, tool, args, bridge), loop)
        try:
            result = await asyncio.wrap_future(handle)
        finally:
            handle.cancel()  # no-op when done; else the call's task on the MCP loop is cancelled
            bridge.close()
        return convert_result(result)

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
        for name, config in wanted.items():
            if name not in self._connections:
                connection = ServerConnection(config, on_change=self._changed, backoff=self.backoff)
                self._connections[name] = connection
                connection.start()

    def _changed(self, state: ServerState) -> None:
        with self._lock:
            if state.name not in self._configs:
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
        await asyncio.gather(*(connection.stop() for connection in connections), return_exceptions=True)


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
