import asyncio
import base64
import logging
import threading
import time
from dataclasses import dataclass
from typing import Annotated

import pytest

from tools.base import tool
from tools.context import ToolContext
from tools.executor import MAX_CONTENT_CHARS, MAX_STORED_CHARS, execute_tool, to_content, truncate
from tools.injection import InjectedContext
from tools.registry import ToolRegistry, default_registry


def _registry(*tools):
    return ToolRegistry(tools)


async def test_it_runs_a_sync_tool_and_returns_its_text():
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    result = await execute_tool(_registry(echo), "echo", {"text": "hi"})

    assert (result.status, result.content, result.artifact) == ("success", "hi", None)


async def test_it_awaits_an_async_tool():
    @tool
    async def double(n: int) -> int:
        """Double."""
        await asyncio.sleep(0)
        return n * 2

    result = await execute_tool(_registry(double), "double", {"n": 21})

    assert (result.status, result.content) == ("success", "42")


async def test_it_reports_an_unknown_tool_with_the_available_ones():
    result = await execute_tool(default_registry(), "weather", {})

    assert result.status == "error"
    assert result.content == (
        "Unknown tool 'weather'. Available tools: calculator, current_time, fetch_url, forget, recall, remember, "
        "search_threads."
    )


async def test_it_does_not_call_the_function_when_arguments_are_invalid():
    calls = []

    @tool
    def record(n: int) -> None:
        """Record."""
        calls.append(n)

    result = await execute_tool(_registry(record), "record", {"n": "three"})

    assert result.status == "error"
    assert result.content == "Invalid arguments for record: n: 'three' is not of type 'integer'"
    assert calls == []


async def test_it_names_a_missing_required_argument():
    result = await execute_tool(default_registry(), "calculator", {})

    assert result.content == "Invalid arguments for calculator: 'expression' is a required property"


async def test_it_lists_every_problem_with_its_path():
    @tool
    def plot(points: list[dict[str, int]], title: str) -> None:
        """Plot."""

    result = await execute_tool(_registry(plot), "plot", {"points": [{"x": 1}, {"x": "far"}]})

    assert result.content == (
        "Invalid arguments for plot: 'title' is a required property; points[1].x: 'far' is not of type 'integer'"
    )


async def test_it_times_out_a_slow_sync_tool():
    release = threading.Event()

    @tool(timeout=0.05)
    def stuck() -> str:
        """Block until released."""
        release.wait(5)
        return "late"

    try:
        result = await execute_tool(_registry(stuck), "stuck", {})
    finally:
        release.set()  # let the abandoned worker thread finish so the loop can close quickly

    assert (result.status, result.content) == ("error", "Tool 'stuck' timed out after 0.05 s")


async def test_it_times_out_a_slow_async_tool():
    @tool(timeout=0.05)
    async def sleepy() -> str:
        """Sleep."""
        await asyncio.sleep(10)
        return "late"

    result = await execute_tool(_registry(sleepy), "sleepy", {})

    assert result.content == "Tool 'sleepy' timed out after 0.05 s"


async def test_a_tool_that_waits_on_a_person_with_its_clock_paused_is_not_timed_out():
    # ToolContext.pause_timeout (what an MCP server's question gives every call of the server in flight): the time
    # between the pause and its release does not count; after it, the rest of the timeout does.
    @tool(timeout=0.2)
    async def waits(context: Annotated[ToolContext, InjectedContext]) -> str:
        """Wait on a person, then take too long."""
        release = context.pause_timeout()
        await asyncio.sleep(0.5)
        release()
        release()  # a second release changes nothing
        return "answered"

    @tool(timeout=0.2)
    async def then_slow(context: Annotated[ToolContext, InjectedContext]) -> str:
        """Wait on a person, then take too long."""
        release = context.pause_timeout()
        await asyncio.sleep(0.1)
        release()
        await asyncio.sleep(10)
        return "late"

    registry = _registry(waits, then_slow)
    assert (await execute_tool(registry, "waits", {})).content == "answered"
    assert (await execute_tool(registry, "then_slow", {})).content == "Tool 'then_slow' timed out after 0.2 s"


async def test_it_reports_a_timeout_error_raised_by_the_tool_as_an_ordinary_error():
    @tool
    async def upstream() -> str:
        """Call a slow upstream."""
        raise TimeoutError("upstream did not answer")

    result = await execute_tool(_registry(upstream), "upstream", {})

    assert result.content == "TimeoutError: upstream did not answer"


async def test_it_turns_an_exception_into_an_error_result_without_traceback():
    @tool
    def broken(n: int) -> int:
        """Break."""
        raise ValueError(f"cannot handle {n}")

    result = await execute_tool(_registry(broken), "broken", {"n": 7})

    assert (result.status, result.content) == ("error", "ValueError: cannot handle 7")


async def test_it_names_the_exception_type_when_the_message_is_empty():
    @tool
    def broken() -> None:
        """Break."""
        raise RuntimeError

    assert (await execute_tool(_registry(broken), "broken", {})).content == "RuntimeError"


async def test_it_logs_arguments_and_traceback_only_at_debug(caplog):
    @tool
    def broken(secret: str) -> None:
        """Break."""
        raise ValueError(secret)

    with caplog.at_level(logging.DEBUG, logger="agentweb.tools"):
        await execute_tool(_registry(broken), "broken", {"secret": "hunter2"})

    above_debug = [r for r in caplog.records if r.levelno > logging.DEBUG]
    assert above_debug and all("hunter2" not in r.getMessage() for r in above_debug)
    assert all(r.exc_info is None for r in above_debug)
    assert any(r.levelno == logging.DEBUG and r.exc_info for r in caplog.records)


async def test_it_lets_cancellation_propagate():
    started = asyncio.Event()

    @tool
    async def forever() -> None:
        """Wait forever."""
        started.set()
        await asyncio.sleep(10)

    task = asyncio.create_task(execute_tool(_registry(forever), "forever", {}))
    await started.wait()
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task


async def test_it_measures_the_duration():
    @tool
    async def nap() -> None:
        """Nap."""
        await asyncio.sleep(0.05)

    result = await execute_tool(_registry(nap), "nap", {})

    assert 40 <= result.duration_ms < 5000


async def test_it_caps_the_content_sent_to_the_model():
    @tool
    def flood() -> str:
        """Flood."""
        return "x" * (MAX_CONTENT_CHARS * 3)

    result = await execute_tool(_registry(flood), "flood", {})

    assert len(result.content) <= MAX_CONTENT_CHARS
    assert "…[truncated " in result.content


@dataclass
class _Point:
    x: int
    label: str


class _Custom:
    def __str__(self) -> str:
        return "custom!"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", "plain text"),
        ({"city": "Zürich", "n": 1}, '{"city": "Zürich", "n": 1}'),
        ([1, 2.5], "[1, 2.5]"),
        (42, "42"),
        (True, "true"),
        (None, "null"),
        (_Point(1, "é"), '{"x": 1, "label": "é"}'),
        (_Custom(), "custom!"),
    ],
    ids=["str", "dict", "list", "int", "bool", "None", "dataclass", "other"],
)
def test_it_converts_return_values_to_text(value, expected):
    assert to_content(value) == expected


def test_it_keeps_head_and_tail_and_counts_what_it_removed():
    content = "H" * 100 + "-" * 1000 + "T" * 100

    capped = truncate(content, limit=300)

    removed = int(capped.split("[truncated ")[1].split(" ")[0])
    assert len(capped) <= 300
    assert capped.startswith("H" * 100) and capped.endswith("T" * 100)
    assert removed == len(content) - (len(capped) - len(f"\n…[truncated {removed} characters]…\n"))


def test_it_leaves_content_within_the_limit_alone():
    assert truncate("short", limit=5) == "short"


async def test_it_reports_a_result_that_cannot_be_rendered():
    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("no text form")

    @tool
    def odd() -> object:
        """Return something odd."""
        return Unprintable()

    result = await execute_tool(_registry(odd), "odd", {})

    assert (result.status, result.content) == ("error", "RuntimeError: no text form")


async def test_it_returns_a_50_mb_result_capped_twice_without_stalling_the_loop():
    @tool
    async def dump() -> str:
        """Return 50 MB."""
        return "a" * (25 * 1024 * 1024) + "z" * (25 * 1024 * 1024)

    gaps = []

    async def ticker():
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.005)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    ticking = asyncio.create_task(ticker())
    try:
        result = await execute_tool(_registry(dump), "dump", {})
    finally:
        ticking.cancel()

    assert result.status == "success"
    assert len(result.content) <= MAX_CONTENT_CHARS and len(result.stored_content) <= MAX_STORED_CHARS
    assert len(result.stored_content) > MAX_STORED_CHARS - 100
    assert result.content.endswith("z") and "…[truncated " in result.stored_content
    assert max(gaps, default=0) < 0.5


async def test_it_renders_a_large_dict_result_off_the_loop():
    @tool
    def table() -> dict:
        """Return a big table."""
        return {str(n): "x" * 100 for n in range(200_000)}

    result = await execute_tool(_registry(table), "table", {})

    assert result.content.startswith('{"0": "xxx') and len(result.stored_content) <= MAX_STORED_CHARS


async def test_it_stores_the_whole_result_when_it_fits_the_storage_cap():
    @tool
    def medium() -> str:
        """Return 100 KB."""
        return "m" * 100_000

    result = await execute_tool(_registry(medium), "medium", {})

    assert len(result.content) <= MAX_CONTENT_CHARS and result.stored_content == "m" * 100_000


async def test_it_separates_content_and_artifact():
    @tool(response_format="content_and_artifact")
    def chart(n: int) -> tuple[str, dict]:
        """Draw a chart."""
        return f"A chart of {n} points.", {"points": list(range(n)), "pair": (1, 2)}

    result = await execute_tool(_registry(chart), "chart", {"n": 3})

    assert (result.status, result.content) == ("success", "A chart of 3 points.")
    assert result.artifact == {"points": [0, 1, 2], "pair": [1, 2]}


async def test_it_reports_an_artifact_that_is_not_json():
    @tool(response_format="content_and_artifact")
    def odd() -> tuple[str, object]:
        """Odd artifact."""
        return "done", {"when": {1, 2}}

    result = await execute_tool(_registry(odd), "odd", {})

    assert result.status == "error" and result.artifact is None
    assert result.content.startswith("The artifact of tool 'odd' is not JSON-serialisable: ")


async def test_it_reports_an_artifact_too_large_to_store():
    @tool(response_format="content_and_artifact")
    def huge() -> tuple[str, str]:
        """Huge artifact."""
        return "done", "x" * (MAX_STORED_CHARS + 1)

    result = await execute_tool(_registry(huge), "huge", {})

    assert result.status == "error" and "artifact of tool 'huge' is too large" in result.content


async def test_it_stores_an_artifact_whose_image_is_larger_than_the_cap_for_the_rest():
    image = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"x" * (MAX_STORED_CHARS * 2)).decode()

    @tool(response_format="content_and_artifact")
    def picture() -> tuple[str, dict]:
        """A picture."""
        return "drawn", {"content": [{"type": "image", "mimeType": "image/png", "data": image}]}

    result = await execute_tool(_registry(picture), "picture", {})

    assert result.status == "success" and result.artifact["content"][0]["data"] == image


async def test_it_reports_a_content_and_artifact_tool_that_returns_one_value():
    @tool(response_format="content_and_artifact")
    def single() -> str:
        """Forgets the artifact."""
        return "just content"

    result = await execute_tool(_registry(single), "single", {})

    assert result.content == (
        "Tool 'single' has response_format='content_and_artifact' and must return (content, artifact); it returned str."
    )


def test_it_refuses_an_unknown_response_format():
    with pytest.raises(ValueError, match="response_format"):
        tool(name="odd", response_format="json")(lambda: None)


def test_it_carries_requires_approval_and_return_direct():
    made = tool(name="careful", requires_approval=True, return_direct=True)(lambda: None)

    assert (made.requires_approval, made.return_direct) == (True, True)


async def test_it_coerces_obvious_mismatches_before_calling():
    @tool
    def scale(n: int, factor: float, loud: bool, options: dict[str, int]) -> str:
        """Scale."""
        return repr((n, factor, loud, options))

    args = {"n": "5", "factor": "2.5", "loud": "true", "options": '{"k": "1"}'}

    assert (await execute_tool(_registry(scale), "scale", args)).content == "(5, 2.5, True, {'k': 1})"


async def test_it_reports_arguments_that_are_not_an_object():
    @tool
    def nothing() -> None:
        """Nothing."""

    result = await execute_tool(_registry(nothing), "nothing", ["a"])

    assert result.content == "Invalid arguments for nothing: ['a'] is not of type 'object'"


async def test_it_delivers_cancellation_into_the_awaiting_tool():
    started, seen = asyncio.Event(), []

    @tool
    async def waits() -> None:
        """Wait."""
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    task = asyncio.create_task(execute_tool(_registry(waits), "waits", {}))
    await started.wait()
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]


async def test_it_runs_a_sync_tool_in_a_worker_thread():
    @tool
    def where() -> str:
        """Which thread."""
        return threading.current_thread().name

    result = await execute_tool(_registry(where), "where", {})

    assert result.content != threading.main_thread().name


async def test_it_keeps_positional_compatibility_and_takes_the_context_by_keyword():
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    with pytest.raises(TypeError):
        await execute_tool(_registry(echo), "echo", {"text": "x"}, ToolContext())  # type: ignore[misc]
