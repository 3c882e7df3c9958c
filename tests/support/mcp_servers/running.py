"""The test MCP server, as the tests run it: a stdio configuration, or a streamable-HTTP process on loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.processes import free_port, stop, wait_for_port
from tools.mcp.config import McpServerConfig

SCRIPT = Path(__file__).with_name("tool_server.py")


def stdio_config(name: str, record: Path, **changes) -> McpServerConfig:
    """The test server as a stdio server; it writes what it saw to ``record``."""
    settings = {"command": sys.executable, "args": (str(SCRIPT),), "env": {"MCP_TEST_RECORD": str(record)}}
    return McpServerConfig(name=name, transport="stdio", **(settings | changes))


class HttpServer:
    """The test server over streamable HTTP on 127.0.0.1, in a process of its own; start() again after a crash."""

    def __init__(self, record: Path, port: int | None = None):
        self.record = record
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def config(self, name: str, **changes) -> McpServerConfig:
        return McpServerConfig(name=name, transport="http", url=self.url, **changes)

    def start(self) -> HttpServer:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                [sys.executable, str(SCRIPT), "http", str(self.port)],
                env={"MCP_TEST_RECORD": str(self.record), "PATH": "/usr/bin:/bin"},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            wait_for_port(self.port, self.process, timeout=60)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process)
