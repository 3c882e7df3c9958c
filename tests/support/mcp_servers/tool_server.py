"""A real MCP server, written with the SDK, for the tests: `python tool_server.py stdio` or
`python tool_server.py http PORT` (streamable HTTP on 127.0.0.1:PORT/mcp).

Its tools cover what a client must handle: a plain result, a slow call (it writes "cancelled" to the file named
by MCP_TEST_RECORD when the client cancels it), a crash mid-call, an image, an isError result, progress, an
elicitation, a tool list that changes, and a tool whose name has a slash (`files/read`). It also writes
"env KEY=..." lines for the environment it got (`environment` tool), so the tests can check what a stdio server is
given.
"""

from __future__ import annotations

import base64
import os
import sys

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("agentweb-test-server", version="1.2.3")

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def record(line: str) -> None:
    path = os.environ.get("MCP_TEST_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


@server.tool()
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@server.tool()
async def slow(seconds: float) -> str:
    """Wait this many seconds, then answer."""
    record("slow started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        record("cancelled")
        raise
    return "done waiting"


@server.tool()
def crash() -> str:
    """End the server's process in the middle of the call."""
    record("crash")
    os._exit(3)


@server.tool()
def picture() -> list:
    """Return a picture and a caption."""
    return ["a single pixel", Image(data=PIXEL, format="png")]


@server.tool()
def fail(reason: str) -> str:
    """Always fail, saying why."""
    raise ToolError(f"cannot do it: {reason}")


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count up, reporting progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await anyio.sleep(0.01)
    return f"counted to {steps}"


class Name(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Ask the person for their name."""
    answer = await ctx.elicit("What is your name?", schema=Name)
    if answer.action == "accept":
        return f"hello {answer.data.name}"
    return f"no name ({answer.action})"


def extra(text: str) -> str:
    """A tool that appears once `grow` was called."""
    return text.upper()


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra` and tell the client its tool list changed."""
    server.add_tool(extra)
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool(name="files/read")
def read_file(path: str) -> str:
    """Read a file (a name with a slash, as some servers give their tools)."""
    return f"the text of {path}"


@server.tool()
def environment() -> str:
    """The names of the environment variables this process got."""
    return " ".join(sorted(os.environ))


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
