import time

import pytest
from django.apps import apps

from mcpservers import services
from mcpservers.models import McpServer
from tests.support.mcp_servers.running import SCRIPT
from tools.mcp.connection import Backoff
from tools.services import mcp_connections, mcp_tools


@pytest.fixture(autouse=True)
def connections(monkeypatch):
    """This process's connections, with quick retries, closed after each test; no AGENTWEB_MCP_CONFIG file read
    before (a file of the test's own is read afresh, and forgotten after)."""
    manager = mcp_connections()
    manager.backoff = Backoff(first=0.2, most=1.0, ping_interval=0.5)
    monkeypatch.setattr(apps.get_app_config("mcpservers"), "config_file", services.ConfigFile())
    yield manager
    manager.shutdown()


@pytest.fixture
def record(tmp_path):
    path = tmp_path / "record.txt"
    path.touch()
    return path


def stdio_row(record, **fields) -> McpServer:
    import sys

    values = {
        "name": "srv",
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SCRIPT)],
        "env": {"MCP_TEST_RECORD": str(record)},
    }
    return McpServer.objects.create(**(values | fields))


def wait_connected(name="srv", timeout=30.0):
    """Start the connections (as a run's tool set does) and wait until ``name`` is connected."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        mcp_tools()
        state = mcp_connections().state(name)
        if state is not None and state.status == "connected":
            return state
        time.sleep(0.05)
    raise AssertionError(f"MCP server {name} did not connect: {mcp_connections().state(name)}")
