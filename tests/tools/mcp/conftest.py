import asyncio
import time

import pytest

from tests.support.mcp_servers.running import HttpServer, stdio_config
from tools.mcp.connection import Backoff
from tools.mcp.manager import McpManager


@pytest.fixture
def record(tmp_path):
    path = tmp_path / "record.txt"
    path.touch()
    return path


@pytest.fixture
def manager():
    # Quick retries and pings: the tests watch reconnects happen.
    manager = McpManager(backoff=Backoff(first=0.2, most=1.0, ping_interval=0.5))
    yield manager
    manager.shutdown()


@pytest.fixture
def http_server(record):
    server = HttpServer(record).start()
    yield server
    server.stop()


@pytest.fixture(params=["stdio", "http"])
def server_config(request, record):
    """The test server over each transport, named "srv"."""
    if request.param == "stdio":
        return stdio_config("srv", record)
    return request.getfixturevalue("http_server").config("srv")


async def wait_until(check, timeout: float = 20.0, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        await asyncio.sleep(step)
    raise AssertionError(f"not within {timeout} s")


async def connected(manager, name="srv", timeout=30.0):
    def check():
        state = manager.state(name)
        return state if state is not None and state.status == "connected" else None

    return await wait_until(check, timeout)
