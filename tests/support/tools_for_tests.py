"""Tools for the tests of tool cards, loaded into the app subprocess with AGENTWEB_TOOL_MODULES (and into the
test process by the tests of tools that talk back mid-call)."""

import asyncio
import base64
import json
import struct
import zlib
from typing import Annotated

from tools import tool
from tools.context import ToolContext
from tools.injection import InjectedAttachments, InjectedContext


@tool(response_format="content_and_artifact")
def sales_report(region: str) -> tuple[str, dict]:
    """Summarise the sales of a region; the rows go into an artifact, kept out of the model's context.

    Args:
        region: The region, e.g. "north".
    """
    rows = [{"month": month, "units": 100 + 7 * n} for n, month in enumerate(["Jan", "Feb", "Mar"])]
    artifact = {
        "region": region,
        "rows": rows,
        "note": '<img src=x onerror="window.__pwned=3"><script>window.__pwned=4</script>',
    }
    return f"{len(rows)} months, {sum(r['units'] for r in rows)} units in {region}.", artifact


@tool
def echo(text: str) -> str:
    """Repeat a text back, as it is.

    Args:
        text: The text to repeat.
    """
    return text


# --- tools that talk back mid-call (chat/runs/interaction.py) --------------------------------------------------

#: What ask_for_details asks: one field of each kind a form knows.
DETAILS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "As it should be printed", "minLength": 2},
        "email": {"type": "string", "format": "email", "title": "Email"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "title": "Age"},
        "colour": {
            "type": "string",
            "title": "Favourite colour",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
        },
        "size": {"type": "string", "enum": ["s", "m", "l"], "enumNames": ["Small", "Medium", "Large"]},
        "newsletter": {"type": "boolean", "title": "Send me the newsletter", "default": False},
        "born": {"type": "string", "format": "date", "title": "Born on"},
    },
    "required": ["name", "email"],
}


@tool(timeout=1)
async def ask_for_details(purpose: str, context: Annotated[ToolContext, InjectedContext]) -> str:
    """Ask the person for their details mid-call, then say what they answered (a test tool).

    Args:
        purpose: Why the details are needed; shown to the person.
    """
    answer = await context.elicit(f"Please fill in your details for {purpose}.", DETAILS_SCHEMA)
    return json.dumps({"action": answer.action, "content": answer.content}, sort_keys=True)


#: What the session task of ask_like_an_mcp_client was answered (for the tests).
SESSION_ANSWERS: list = []


@tool(timeout=1)
async def ask_like_an_mcp_client(context: Annotated[ToolContext, InjectedContext]) -> str:
    """Ask from another task than the call's, as an MCP client's session task does (a test tool)."""

    async def session_task():
        answer = await context.elicit("Go on?", {"type": "object", "properties": {}})
        SESSION_ANSWERS.append(answer)
        return answer

    task = asyncio.get_running_loop().create_task(session_task())
    return (await asyncio.shield(task)).action


@tool
async def count_up(to: int, context: Annotated[ToolContext, InjectedContext]) -> str:
    """Count, reporting progress at every number (a test tool that reports very often).

    Args:
        to: The number to count to.
    """
    for n in range(1, to + 1):
        await context.report_progress(n, to, f"counted {n}")
    return f"counted to {to}"


@tool(timeout=60)
async def download_files(files: int, pause: float, context: Annotated[ToolContext, InjectedContext]) -> str:
    """Pretend to download files, one every `pause` seconds, reporting progress (a slow test tool).

    Args:
        files: How many files.
        pause: Seconds per file.
    """
    for n in range(files):
        await context.report_progress(n, files, "Downloading")
        await asyncio.sleep(pause)
    return f"{files} files downloaded"


def square_png(size: int = 8, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A PNG of one colour, written by hand (no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@tool(response_format="content_and_artifact")
def draw_square(size: int) -> tuple[str, dict]:
    """Draw a red square; the picture comes back as an MCP-shaped artifact (a test tool).

    Args:
        size: Its side, in pixels.
    """
    image = base64.b64encode(square_png(size)).decode()
    artifact = {
        "content": [
            {"type": "text", "text": f"A red square of {size} pixels."},
            {"type": "image", "mimeType": "image/png", "data": image},
            {"type": "image", "mimeType": "image/svg+xml", "data": base64.b64encode(b"<svg/>").decode()},
            {"type": "image", "mimeType": "image/png", "data": "not base64!"},
            {"type": "resource", "resource": {"uri": "file:///square.txt", "text": "<b>square</b>"}},
        ],
        "structuredContent": {"side": size, "colour": "red"},
    }
    return f"Drew a red square of {size} pixels.", artifact


@tool
def describe_attachments(attachments: Annotated[list, InjectedAttachments]) -> str:
    """Describe the files attached to the message being answered: name, type, size, the start of their text and
    the first bytes of their content.
    """
    return json.dumps(
        [
            {
                "name": a.name,
                "content_type": a.content_type,
                "size": a.size,
                "text": a.text[:40] if a.text is not None else None,
                "head": base64.b64encode(a.read()[:8]).decode(),
            }
            for a in attachments
        ]
    )
