"""Sync tools run in a bounded pool of their own: a tool that hangs takes at most its share of the threads, so
other tools, and fetch_url's DNS lookups (asyncio's default pool), still run; calls still running past their
timeout are reported."""

import asyncio
import threading

import pytest

from tools.base import tool
from tools.executor import execute_tool
from tools.net import BlockedURL, check_url
from tools.pool import TOOL_THREADS
from tools.registry import ToolRegistry

#: More hanging calls than any default pool has threads (asyncio's: min(32, CPUs + 4)).
MANY = 40


@pytest.fixture
def hanging():
    """A sync tool that blocks until the test ends, with a short timeout; and the event that releases it."""
    release = threading.Event()

    @tool(timeout=0.1)
    def hang() -> str:
        """Block until released."""
        release.wait(30)
        return "released"

    yield hang, release
    release.set()
    assert TOOL_THREADS.wait_idle("hang", timeout=30)  # the next test starts with the tool's threads free


@tool(timeout=10)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_a_hanging_sync_tool_leaves_threads_for_other_tools(hanging):
    hang, _ = hanging
    registry = ToolRegistry([hang, add])
    stuck = await asyncio.gather(*(execute_tool(registry, "hang", {}) for _ in range(MANY)))
    assert {result.status for result in stuck} == {"error"}

    result = await execute_tool(registry, "add", {"a": 2, "b": 3})
    assert (result.status, result.content) == ("success", "5")


async def test_a_hanging_sync_tool_leaves_fetch_urls_dns_lookups_alone(hanging):
    hang, _ = hanging
    await asyncio.gather(*(execute_tool(ToolRegistry([hang]), "hang", {}) for _ in range(MANY)))
    async with asyncio.timeout(10):  # a starved lookup would wait forever: fail instead
        with pytest.raises(BlockedURL, match="localhost"):
            await check_url("http://localhost:1/")


async def test_a_call_that_finds_its_tools_threads_all_taken_says_so(hanging):
    hang, _ = hanging
    results = await asyncio.gather(*(execute_tool(ToolRegistry([hang]), "hang", {}) for _ in range(MANY)))
    waited = results[-1].content
    assert waited.startswith("Tool 'hang' timed out after 0.1 s")
    assert f"all {TOOL_THREADS.per_tool} threads it may use are held by calls still running" in waited


async def test_calls_running_past_their_timeout_are_listed_until_they_end(hanging):
    hang, release = hanging
    await asyncio.gather(*(execute_tool(ToolRegistry([hang]), "hang", {}) for _ in range(3)))
    [stuck] = [entry for entry in TOOL_THREADS.stuck() if entry.tool == "hang"]
    assert (stuck.calls, stuck.timeout) == (3, 0.1)

    release.set()
    await asyncio.to_thread(TOOL_THREADS.wait_idle, "hang")
    assert [entry for entry in TOOL_THREADS.stuck() if entry.tool == "hang"] == []


@pytest.fixture
def one_thread():
    """The whole pool one thread, as AGENTWEB_TOOL_THREADS=1 makes it; the sizes restored afterwards."""
    before = (TOOL_THREADS.threads, TOOL_THREADS.per_tool)
    TOOL_THREADS.configure(threads=1, per_tool=1)
    yield
    TOOL_THREADS.configure(threads=before[0], per_tool=before[1])


async def test_an_async_tools_small_result_needs_no_thread_while_a_sync_tool_holds_them_all(one_thread, hanging):
    hang, _ = hanging

    @tool(timeout=2, response_format="content_and_artifact")
    async def lookup(city: str) -> tuple[str, dict]:
        """Look a city up (as an MCP tool answers: text and a small structured result)."""
        return f"{city}: 12 °C", {"structuredContent": {"city": city, "celsius": 12}}

    registry = ToolRegistry([hang, lookup])
    await execute_tool(registry, "hang", {})  # timed out, still holding the pool's one thread

    result = await execute_tool(registry, "lookup", {"city": "Oslo"})
    assert (result.status, result.content) == ("success", "Oslo: 12 °C")
    assert result.artifact == {"structuredContent": {"city": "Oslo", "celsius": 12}}


def test_the_pool_refuses_sizes_that_are_not_positive():
    with pytest.raises(ValueError, match="AGENTWEB_TOOL_THREADS"):
        TOOL_THREADS.configure(threads=0, per_tool=1)
