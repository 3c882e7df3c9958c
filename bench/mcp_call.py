"""mcp-call: the app's overhead per MCP tool call, over stdio and streamable HTTP, against the SDK's own client.

The test MCP server (tests/support/mcp_servers/tool_server.py) answers `add`. Through the app, a call goes
through tools.executor.execute_tool (schema check, deadline, result capture) to the server's connection on the
MCP loop (tools/mcp/manager.py: a hop to another thread and back) and the result is converted; the floor is
`mcp.Client.call_tool` on a connection of its own to the same server, from the caller's loop. Calls are made one
at a time, in blocks of BLOCK calls of one way then BLOCK of the other, the first call of each block not counted:
a call made right after a call the other way pays for what that one left behind (the call after an SDK call took
0.4 to 0.55 ms longer whichever way it went, on 2026-11-29), so strict alternation charged the SDK's trailing work
to the app. The medians are compared.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters

from tools.executor import execute_tool
from tools.mcp.config import McpServerConfig
from tools.mcp.manager import McpManager
from tools.mcp.tools import server_tools
from tools.registry import ToolRegistry

from .common import ROOT, Result

SERVER = ROOT / "tests" / "support" / "mcp_servers" / "tool_server.py"
OVERHEAD_MS = 1.0
BLOCK = 10  # calls one way, then as many the other (the first of each not counted)


async def mcp_call(app, result: Result, smoke: bool) -> None:
    calls = 20 if smoke else 400
    for transport in ("stdio", "http"):
        http = _start_http() if transport == "http" else None
        try:
            config = (
                McpServerConfig(name="bench", transport="http", url=http[1])
                if http
                else McpServerConfig(name="bench", transport="stdio", command=sys.executable, args=(str(SERVER),))
            )
            through_app, sdk = await _measure(config, calls)
        finally:
            if http:
                http[0].terminate()
                http[0].wait(10)
        overhead = through_app - sdk
        result.add(
            f"one call over {transport}, median",
            through_app,
            "ms",
            target=f"≤ SDK + {OVERHEAD_MS:g} ms",
            floor=sdk,
            passed=overhead <= OVERHEAD_MS,
            judged=overhead,
            judged_as="overhead",
            note=f"{calls} calls each, in blocks of {BLOCK} one way then the other (the first of a block not counted)",
        )


async def _measure(config: McpServerConfig, calls: int) -> tuple[float, float]:
    manager = McpManager()
    try:
        manager.configure([config])
        deadline = time.monotonic() + 60
        while (state := manager.state("bench")).status != "connected":
            if time.monotonic() > deadline:
                raise RuntimeError(f"the MCP server did not connect: {state.error}")
            await asyncio.sleep(0.05)
        registry = ToolRegistry(server_tools(config, state, manager))
        target = (
            config.url
            if config.transport == "http"
            else StdioServerParameters(command=config.command, args=list(config.args))
        )
        async with Client(target, mode="legacy", cache=None) as client:

            async def through_app(n: int) -> None:
                done = await execute_tool(registry, "bench__add", {"a": n, "b": 1})
                assert done.status == "success", done.content

            async def through_sdk(n: int) -> None:
                await client.call_tool("add", {"a": n, "b": 1})

            timings: dict = {through_app: [], through_sdk: []}
            await through_app(0)  # both warmed up
            await through_sdk(0)
            for block in range(-(-calls // (BLOCK - 1))):
                for call in (through_app, through_sdk) if block % 2 else (through_sdk, through_app):
                    for n in range(BLOCK):
                        started = time.perf_counter()
                        await call(n)
                        if n:  # the first of a block pays for the other way's last call
                            timings[call].append((time.perf_counter() - started) * 1000)
        return statistics.median(timings[through_app]), statistics.median(timings[through_sdk])
    finally:
        manager.shutdown()


def _start_http() -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the MCP test server did not listen")
