"""Run one tool call: check the arguments, call under a deadline, and turn any outcome into a ToolResult.

Failures become results, not exceptions, because the model must see them to recover (fix its arguments,
try another tool). The one exception is cancellation, which belongs to the caller and always propagates.
"""

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from tools.artifacts import MAX_ARTIFACT_IMAGE_CHARS, artifact_size
from tools.base import Tool
from tools.coerce import coerce, validation_problems
from tools.context import ToolContext
from tools.convert import to_declared
from tools.injection import resolve_injections
from tools.pool import TOOL_THREADS
from tools.registry import ToolRegistry
from tools.results import MAX_CONTENT_CHARS, MAX_STORED_CHARS, Capped, capture, to_content, truncate

__all__ = [
    "MAX_CONTENT_CHARS",
    "MAX_STORED_CHARS",
    "ToolResult",
    "execute_tool",
    "to_content",
    "truncate",
    "validation_errors",
]

logger = logging.getLogger("agentweb.tools")

Status = Literal["success", "error"]


@dataclass
class ToolResult:
    status: Status
    content: str  # what the model reads, at most MAX_CONTENT_CHARS
    duration_ms: int
    artifact: Any = None  # JSON data shown in the tool card, never sent to the model
    stored_content: str | None = None  # the result as stored, at most MAX_STORED_CHARS; None: same as content

    def __post_init__(self) -> None:
        if self.stored_content is None:
            self.stored_content = self.content


class ToolFailure(Exception):
    """A failure whose message is already what the model should read."""


async def execute_tool(
    registry: ToolRegistry, name: str, args: Any, *, context: ToolContext | None = None
) -> ToolResult:
    """Execute the tool ``name`` with the model's ``args``. Never raises, except asyncio.CancelledError."""
    started = time.monotonic()
    try:
        captured, artifact = await _run(registry, name, args, context or ToolContext())
        status: Status = "success"
    except ToolFailure as failure:
        captured, artifact, status = capture(str(failure)), None, "error"
    duration_ms = round((time.monotonic() - started) * 1000)
    return ToolResult(
        status=status,
        content=captured.text(MAX_CONTENT_CHARS),
        duration_ms=duration_ms,
        artifact=artifact,
        stored_content=captured.text(MAX_STORED_CHARS),
    )


async def _run(registry: ToolRegistry, name: str, args: Any, context: ToolContext) -> tuple[Capped, Any]:
    tool = registry.get(name)
    if tool is None:
        available = ", ".join(registry.names()) or "none"
        raise ToolFailure(f"Unknown tool {name!r}. Available tools: {available}.")
    deadline = asyncio.timeout(tool.timeout)
    pause = _DeadlinePause(deadline)
    elicit = pause.around(context.elicit) if context.elicit is not None else None
    connect = pause.around(context.connect) if context.connect is not None else None
    context = replace(context, elicit=elicit, connect=connect, pause_timeout=pause.hold)
    kwargs = _arguments(tool, args) | _injected(tool, context)
    try:
        async with deadline:
            value = await _call(tool, kwargs)
            # Rendering sits inside the deadline: a result that cannot be rendered is the tool's failure too.
            return await _render(tool, value)
    except TimeoutError as exc:
        # A TimeoutError raised by the tool itself (e.g. a socket timeout) is an ordinary tool error.
        if not deadline.expired():
            raise ToolFailure(_describe_failure(tool, kwargs, exc)) from None
        logger.info("Tool %s timed out after %g s", tool.name, tool.timeout)
        raise ToolFailure(f"Tool {tool.name!r} timed out after {tool.timeout:g} s{_threads_note(tool)}") from None
    except ToolFailure:
        raise
    except Exception as exc:
        raise ToolFailure(_describe_failure(tool, kwargs, exc)) from None


class _DeadlinePause:
    """The time a call waits for a person (ToolContext.elicit) does not count against its timeout: the deadline is
    put off while any of its requests for input is open (or any hold of ToolContext.pause_timeout), and moved later
    by as long as they were open.

    The request may be made from another task than the call's (an MCP client's session task): rescheduling a
    deadline only needs the same event loop."""

    def __init__(self, deadline: asyncio.Timeout):
        self.deadline = deadline
        self.open = 0
        self.remaining: float | None = None

    def around(self, ask):
        """`ask` (ToolContext.elicit or .connect), with the deadline put off while it waits for the person."""

        async def paused(*args: Any) -> Any:
            self._pause()
            try:
                return await ask(*args)
            finally:
                self._resume()

        return paused

    def hold(self) -> Callable[[], None]:
        """ToolContext.pause_timeout: the deadline is put off until the returned function is called (once)."""
        self._pause()
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._resume()

        return release

    def _pause(self) -> None:
        self.open += 1
        when = self.deadline.when()
        if self.open == 1 and when is not None:
            remaining = max(when - asyncio.get_running_loop().time(), 0.0)
            if self._reschedule(None):
                self.remaining = remaining

    def _resume(self) -> None:
        self.open -= 1
        if self.open == 0 and self.remaining is not None:
            self._reschedule(asyncio.get_running_loop().time() + self.remaining)
            self.remaining = None

    def _reschedule(self, when: float | None) -> bool:
        try:
            self.deadline.reschedule(when)
        except RuntimeError:  # the call is no longer under its deadline (it expired, or the call has ended)
            return False
        return True


def _arguments(tool: Tool, args: Any) -> dict[str, Any]:
    """The model's arguments, coerced, validated and converted to the declared types."""
    if isinstance(args, dict):
        # Injected names are the runtime's: whatever the model sent under them is dropped, never passed on.
        injected = {injection.name for injection in tool.injections}
        args = {key: value for key, value in args.items() if key not in injected}
    args = coerce(args, tool.parameters)
    problems = validation_problems(args, tool.parameters)
    if problems:
        raise ToolFailure(f"Invalid arguments for {tool.name}: " + "; ".join(problems))
    try:
        return {key: to_declared(value, tool.arg_types.get(key, Any)) for key, value in args.items()}
    except (TypeError, ValueError) as exc:  # a dataclass's __post_init__, a pydantic validator, an Enum
        raise ToolFailure(f"Invalid arguments for {tool.name}: {exc}") from None


def _injected(tool: Tool, context: ToolContext) -> dict[str, Any]:
    values, missing = resolve_injections(tool.name, tool.injections, context)
    if missing:
        raise ToolFailure(missing)
    return values


def validation_errors(tool: Tool, args: Any) -> list[str]:
    """Every way ``args`` breaks the tool's schema, each prefixed with where it happened."""
    return validation_problems(args, tool.parameters)


async def _call(tool: Tool, kwargs: dict[str, Any]) -> Any:
    if tool.is_async:
        return await tool.func(**kwargs)
    # A thread cannot be killed: on timeout the caller moves on and the thread finishes in the background,
    # holding one of the tool's own threads (tools/pool.py), never one that other tools or DNS lookups need.
    return await TOOL_THREADS.run(tool.name, tool.timeout, tool.func, **kwargs)


def _threads_note(tool: Tool) -> str:
    """Why a sync tool's call may have timed out without running: its share of the threads is taken."""
    if tool.is_async or TOOL_THREADS.busy(tool.name) < TOOL_THREADS.per_tool:
        return ""
    return (
        f"; all {TOOL_THREADS.per_tool} threads it may use are held by calls still running"
        " (a call that hangs keeps its thread until it returns)"
    )


async def _render(tool: Tool, value: Any) -> tuple[Capped, Any]:
    """The captured content and the JSON artifact. Large values are encoded in a thread, off the loop."""
    artifact = None
    if tool.response_format == "content_and_artifact":
        if not (isinstance(value, tuple | list) and len(value) == 2):
            raise ToolFailure(
                f"Tool {tool.name!r} has response_format='content_and_artifact' and must return "
                f"(content, artifact); it returned {type(value).__name__}."
            )
        value, artifact = value
    if isinstance(value, str) and artifact is None:
        return capture(value), None  # two slices: cheap enough for the loop whatever the size
    if _small((value, artifact)):
        # A thread's round trip costs more than encoding a few rows (half a millisecond of an MCP call's).
        return _render_value(tool, value, artifact)
    return await TOOL_THREADS.run(tool.name, tool.timeout, _render_value, tool, value, artifact)


#: A result at most this big is rendered on the event loop: its encoding takes microseconds.
SMALL_NODES = 256
SMALL_CHARS = 16 * 1024


def _small(value: Any) -> bool:
    """Whether ``value`` is plain JSON data within SMALL_NODES values and SMALL_CHARS characters of text.

    The walk stops at the first value over either limit or of another type, so a 50 MB result costs no more
    to look at than a small one."""
    nodes, chars, pending = 0, 0, [value]
    while pending:
        item = pending.pop()
        nodes += 1
        if nodes > SMALL_NODES:
            return False
        if isinstance(item, str):
            chars += len(item)
            if chars > SMALL_CHARS:
                return False
        elif isinstance(item, dict | list | tuple):
            if nodes + len(pending) + len(item) > SMALL_NODES:  # before looking inside: a huge one is not walked
                return False
            if isinstance(item, dict):
                for key, member in item.items():
                    if not isinstance(key, str):
                        return False
                    chars += len(key)
                    pending.append(member)
            else:
                pending.extend(item)
        elif not (item is None or isinstance(item, bool | int | float)):
            return False
    return chars <= SMALL_CHARS


def _render_value(tool: Tool, value: Any, artifact: Any) -> tuple[Capped, Any]:
    return capture(value), _json_artifact(tool, artifact)


def _json_artifact(tool: Tool, artifact: Any) -> Any:
    """The artifact as plain JSON data (tuples become lists), refused when it has no JSON form or is too big."""
    if artifact is None:
        return None
    try:
        text = json.dumps(artifact, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolFailure(f"The artifact of tool {tool.name!r} is not JSON-serialisable: {exc}") from None
    data = json.loads(text)
    size = artifact_size(data)
    if not size.fits(MAX_STORED_CHARS):
        raise ToolFailure(
            f"The artifact of tool {tool.name!r} is too large: {size.other} characters as JSON besides "
            f"{size.images} of image data (the limits are {MAX_STORED_CHARS} and {MAX_ARTIFACT_IMAGE_CHARS})."
        )
    return data


def _describe_failure(tool: Tool, kwargs: dict, exc: Exception) -> str:
    # The message may quote the arguments, which can be private, so it stays out of logs above DEBUG.
    logger.info("Tool %s raised %s", tool.name, type(exc).__name__)
    logger.debug("Tool %s failed with args %r", tool.name, kwargs, exc_info=exc)
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
