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


OAUTH_SCRIPT = Path(__file__).with_name("oauth_server.py")


class OAuthServer:
    """oauth_server.py (an MCP server protected by OAuth, with its own authorization server) on 127.0.0.1."""

    def __init__(self, record: Path, *, token_seconds: int = 3600):
        self.record = record
        self.port = free_port()
        self.token_seconds = token_seconds
        self.process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def start(self) -> OAuthServer:
        self.process = subprocess.Popen(
            [sys.executable, str(OAUTH_SCRIPT), str(self.port)],
            env={
                "MCP_TEST_RECORD": str(self.record),
                "TOKEN_SECONDS": str(self.token_seconds),
                "PATH": "/usr/bin:/bin",
            },
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process, timeout=60)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process)

    def sign_in(self, authorization_url: str, account: str) -> str:
        """The person at the authorization server: its sign-in page, as `account`. Returns where it sends the
        browser back (the app's callback, with the code)."""
        import httpx

        with httpx.Client(follow_redirects=False, timeout=30) as http:
            login = http.get(authorization_url)
            assert login.status_code == 302, login.text
            page = http.get(login.headers["location"])
            login_id = page.text.split("name=login value='", 1)[1].split("'", 1)[0]
            back = http.post(f"{self.base}/login", data={"login": login_id, "account": account})
            assert back.status_code == 302, back.text
            return back.headers["location"]

    def revoke(self, account: str) -> None:
        import httpx

        httpx.post(f"{self.base}/test/revoke", params={"account": account}, timeout=10).raise_for_status()

    def stats(self) -> dict:
        import httpx

        return httpx.get(f"{self.base}/test/stats", timeout=10).json()
