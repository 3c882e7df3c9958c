"""search_threads: find what the calling user said (or was told) in earlier threads.

The search itself is the runtime's (ToolContext.search_messages, bound to the calling user by the Django
side), so this tool can only ever read that user's own messages.
"""

from datetime import datetime
from typing import Annotated, Any

from tools.base import tool
from tools.context import ToolContext
from tools.injection import InjectedContext

MAX_LIMIT = 20
SNIPPET_CHARS = 500


@tool
async def search_threads(query: str, context: Annotated[ToolContext, InjectedContext], limit: int = 5) -> str:
    """Search this user's own earlier conversations (every version of each message) for messages with these words.

    Args:
        query: Words to look for, e.g. "invoice number" or "trip to Lisbon".
        limit: How many messages to return (1-20).
    """
    query = query.strip()
    if not query:
        raise ValueError("The query must not be empty.")
    if context.search_messages is None:
        raise RuntimeError("Searching past conversations is not available here.")
    hits = await context.search_messages(query, max(1, min(limit, MAX_LIMIT)))
    if not hits:
        return f"No earlier messages match {query!r}."
    return "\n\n".join(_format(number, hit) for number, hit in enumerate(hits, start=1))


def _format(number: int, hit: dict[str, Any]) -> str:
    title = hit.get("thread_title") or "Untitled"
    content = " ".join(str(hit.get("content", "")).split())
    if len(content) > SNIPPET_CHARS:
        content = content[:SNIPPET_CHARS] + "…"
    when = hit.get("created_at")
    when_text = when.isoformat(timespec="minutes") if isinstance(when, datetime) else str(when or "")
    header = f'{number}. "{title}" (thread {hit.get("thread")}, {hit.get("role", "?")}'
    return f"{header}{', ' + when_text if when_text else ''}{_version(hit)}):\n{content}"


def _version(hit: dict[str, Any]) -> str:
    """Which version matched, when the message has versions or the thread no longer shows it."""
    version = hit.get("version")
    which = f"version {version['index']} of {version['count']}" if isinstance(version, dict) else ""
    if hit.get("shown", True):
        return f", {which}" if which else ""
    return f", {which + ', ' if which else ''}not the version shown"
