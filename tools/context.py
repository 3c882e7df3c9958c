"""What the runtime knows about a tool call and can hand to a tool: the user, the thread, the call id, the store,
and, where the runtime offers them, a way to report progress and to ask the person for input mid-call.

Plain dataclasses and a Protocol, so tools stay testable without Django: the Django side builds a
ToolContext from the request and its own store; tests and scripts use MemoryStore.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "Connect",
    "Elicit",
    "ElicitationAnswer",
    "KeyValueStore",
    "MemoryStore",
    "MessageSearch",
    "PauseTimeout",
    "ReportProgress",
    "ToolContext",
    "ToolUser",
]


@dataclass(frozen=True)
class ToolUser:
    """The person on whose behalf the tool runs."""

    id: int | None
    username: str
    groups: frozenset[str] = frozenset()


class KeyValueStore(Protocol):
    """A per-user key-value store: every key belongs to the user the store was opened for."""

    async def get(self, key: str) -> Any | None: ...
    async def put(self, key: str, value: Any) -> None: ...
    async def delete(self, key: str) -> bool: ...
    async def items(self, prefix: str = "") -> list[tuple[str, Any]]: ...


# (query, limit) -> [{"thread", "thread_title", "role", "content", "created_at"}], the calling user's messages only.
MessageSearch = Callable[[str, int], Awaitable[list[dict[str, Any]]]]


@dataclass(frozen=True)
class ElicitationAnswer:
    """What the person answered to a request for input (MCP's elicitation result): `accept` with the `content`
    they entered (an object that fits the requested schema), `decline`, or `cancel` (they dismissed it, the call
    was stopped, or nobody answered in time)."""

    action: Literal["accept", "decline", "cancel"]
    content: dict | None = None


# (progress, total or None, message or None): how far the call is. Shown on the card's status line; cheap to call
# often (the runtime sends the latest value a few times a second at most).
ReportProgress = Callable[[float, float | None, str | None], Awaitable[None]]
# (message, requested JSON schema: a flat object of string / number / integer / boolean / enum properties) ->
# the person's answer. Waiting for it does not count against the tool's timeout. Raises ValueError for a schema
# the runtime cannot show as a form.
Elicit = Callable[[str, dict], Awaitable[ElicitationAnswer]]
# Stops the call's timeout clock until the function it returns is called (once): for a wait on a person that does
# not go through `elicit` (an MCP server's question while this call is in flight on it: the 2025 protocol does not
# say which call a question belongs to). Called on the call's event loop.
PauseTimeout = Callable[[], Callable[[], None]]
# (server, mode "oauth" or "header", check) -> whether the person connected: asks the person to connect to an MCP
# server that each person connects to (a "Connect" card on the call), and waits, calling `check` now and then (the
# connection is made by a page of the app, in any process), until it says True, the person cancels, the call ends or
# nobody answers in time (False). Waiting does not count against the tool's timeout.
Connect = Callable[[str, str, Callable[[], Awaitable[bool]]], Awaitable[bool]]


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool may be injected with. Any part may be missing; tools that need it get an error result."""

    user: ToolUser | None = None
    thread_id: str | None = None
    tool_call_id: str | None = None
    store: KeyValueStore | None = None
    search_messages: MessageSearch | None = None
    # None when the runtime offers none (a script, the admin's try-it console).
    report_progress: ReportProgress | None = None
    elicit: Elicit | None = None
    # Given by the executor to every call (None outside it).
    pause_timeout: PauseTimeout | None = None
    # None when the runtime cannot ask the person to connect (a script, the admin's try-it console).
    connect: Connect | None = None
    # The attachments of the message the run answers (attachments/services.py ToolAttachment: name, content_type,
    # size, text, read()); empty when it has none.
    attachments: tuple = ()


@dataclass
class MemoryStore:
    """A KeyValueStore in a dict: for tests and for running tools outside the web app."""

    data: dict[str, Any] = field(default_factory=dict)

    async def get(self, key: str) -> Any | None:
        return self.data.get(key)

    async def put(self, key: str, value: Any) -> None:
        self.data[key] = value

    async def delete(self, key: str) -> bool:
        if key not in self.data:
            return False
        del self.data[key]
        return True

    async def items(self, prefix: str = "") -> list[tuple[str, Any]]:
        return [(key, self.data[key]) for key in sorted(self.data) if key.startswith(prefix)]
