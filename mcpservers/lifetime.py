"""Where a process's MCP connections start and stop.

They start lazily, when a run's tool set is first built (tools/services.py), and, in a Daphne process, at start-up
in the background (agentweb/serve.py), so that the first run finds its servers connected; nothing waits for them.
They stop when the process ends: tools/mcp/manager.py registers an atexit handler as soon as it has a connection,
and a run worker, which ends itself with SIGTERM (chat/worker.py), closes them before it does. Closing ends the
stdio servers' processes (the SDK closes their input, then terminates their process group).
"""

from __future__ import annotations

import logging
import threading

from tools.services import mcp_connections, mcp_tools

log = logging.getLogger("agentweb.tools.mcp")


def start_in_background() -> None:
    """Read the configured servers and start connecting, on a thread of its own: start-up does not wait."""

    def start() -> None:
        from django.db import connection

        try:
            mcp_tools()
        except Exception:  # a database not migrated yet, say: the first run's tool set tries again
            log.exception("MCP servers could not be started at start-up")
        finally:
            connection.close()

    threading.Thread(target=start, name="mcp-start", daemon=True).start()


def stop() -> None:
    """Close every connection of this process (bounded: tools/mcp/manager.py STOP_SECONDS)."""
    mcp_connections().shutdown()
