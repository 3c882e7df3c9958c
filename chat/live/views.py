"""What a client is sent, one definition per thing it sees: a tool call, a message, a run, the snapshot, and the
fields of every event (docs/protocol.md is the contract; tests/chat/live/test_views.py holds these to its tables and
to every frame the server sends in its tests).

TypedDicts: plain dicts at run time, so an event is still built as a dict literal (the per-token path pays nothing);
the names only tell every writer (chat/store/snapshot.py, chat/runs/subscribe.py rebuild, chat/live/events.py)
what the one shape is. A key the client may not find is
`NotRequired`; a value that may be null is `X | None`.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

#: Any JSON value: a tool call's arguments (an object, or the model's own text when they could not be read), a
#: structured answer, a JSON Schema. What the model or the tool wrote, not a shape of ours.
JSON = Any

Role = Literal["user", "assistant"]
MessageStatus = Literal["streaming", "complete", "cancelled", "error"]
ToolCallStatus = Literal[
    "streaming", "requested", "awaiting_approval", "running", "success", "error", "rejected", "replied", "cancelled"
]
RunStatus = Literal["running", "waiting", "completed", "failed", "cancelled", "interrupted"]
RunReason = Literal["done", "return_direct", "max_steps"]
DecisionKind = Literal["approve", "edit", "reject", "respond"]
InputAction = Literal["accept", "decline", "cancel"]


# --- the parts ------------------------------------------------------------------------------------------------------


class UsageView(TypedDict):
    """A model call's tokens (or a run's totals): `cost` a decimal string, or None when not priced (chat/usage.py)."""

    input_tokens: int
    output_tokens: int
    estimated: bool
    cost: str | None


class AgentView(TypedDict):
    slug: str
    name: str


class ModelView(TypedDict):
    """What a browser may know of a thread's model (modelconfig): never its key or its server's address."""

    id: str
    name: str
    label: str
    is_demo: bool
    help: str
    context_window: int | None
    supports_images: bool


class ShownModelView(TypedDict):
    """thread.model_changed's `model`: what a tab shows of it."""

    id: str | None
    label: str | None
    is_demo: bool | None
    context_window: int | None


class AttachmentView(TypedDict):
    id: str
    name: str
    content_type: str
    kind: Literal["image", "text", "pdf"]
    size: int
    chars: int | None
    capped_at: int | None


class VersionsView(TypedDict):
    index: int
    count: int
    ids: list[int]


class AllowView(TypedDict):
    approve: bool
    edit: bool
    reject: bool
    respond: bool


class DecisionView(TypedDict):
    decision: DecisionKind
    by: str
    message: str | None
    at: str


class ProgressView(TypedDict):
    progress: float
    total: float | None
    message: str | None


class InputRequestView(TypedDict):
    request: str
    message: str
    schema: dict[str, JSON]


class ConnectRequestView(TypedDict):
    """A call waits for the person to connect their account to an MCP server each person connects to: `url` is the
    app's page where they do (docs/mcp.md)."""

    request: str
    server: str
    mode: Literal["oauth", "header"]
    url: str


class ToolCallExtras(TypedDict, total=False):
    """What a running call's tool told beyond its status, which a run holds (chat/runs/interaction.py) and its
    snapshot's call carries: its last progress, its open request for input, its open request to connect."""

    progress: ProgressView
    input_request: InputRequestView
    connect_request: ConnectRequestView


class SummaryView(TypedDict):
    """The thread's summary as a page shows it: a note before message `before` (None: after the last one)."""

    text: str
    before: int | None


class SummarisedView(SummaryView):
    usage: UsageView | None


# --- a tool call, a message, a run, the snapshot ---------------------------------------------------------------------


class ToolCallView(TypedDict):
    """A tool call as a snapshot shows it (chat/store/snapshot.py tool_call_view)."""

    id: str
    call_id: str
    name: str
    args: JSON
    status: ToolCallStatus
    content: str
    has_artifact: bool
    images: int
    duration_ms: int | None
    allow: AllowView | None
    original_args: JSON
    decision: DecisionView | None
    # Only while it runs, from the run that holds it (never stored): its last progress, its open request for input.
    progress: NotRequired[ProgressView]
    input_request: NotRequired[InputRequestView]
    connect_request: NotRequired[ConnectRequestView]


class MessageView(TypedDict):
    """A user or assistant message as a snapshot shows it (chat/store/snapshot.py message_views). The keys after
    `attachments` are an assistant message's (absent on a user message); `structured` and `versions` only when it
    has them."""

    id: int
    role: Role
    content: str
    status: MessageStatus
    attachments: NotRequired[list[AttachmentView]]
    finish_reason: NotRequired[str | None]
    reasoning: NotRequired[str | None]
    usage: NotRequired[UsageView | None]
    structured: NotRequired[JSON]
    tool_calls: NotRequired[list[ToolCallView]]
    versions: NotRequired[VersionsView]


class SentMessageView(TypedDict):
    """run.started's `user_message`: the sent message as a snapshot shows it, and the client_msg_id it came with."""

    id: int
    role: Role
    content: str
    status: MessageStatus
    attachments: NotRequired[list[AttachmentView]]
    client_msg_id: str | None


class RunView(TypedDict):
    """The thread's latest run as a snapshot shows it (chat/store/snapshot.py run_view)."""

    id: int
    status: RunStatus
    reason: RunReason | None
    error: str | None
    steps: int
    notes: list[str]
    usage: UsageView | None


class SnapshotFields(TypedDict):
    """thread.snapshot's fields as chat/live/events.py builds them; build_snapshot adds the rest (SnapshotView)."""

    title: str
    model: ModelView
    messages: list[MessageView]
    run: RunView | None
    agent: AgentView | None
    disabled_tools: list[str]


class SnapshotView(SnapshotFields):
    """The thread.snapshot frame, whole: the thread's state as of `seq`."""

    type: Literal["thread.snapshot"]
    thread: str
    seq: int
    summary: NotRequired[SummaryView]
    # Only for a subscribe with `paged`: the id of its first message when the thread shows earlier ones (the cursor of
    # GET /t/<thread>/messages?before=), else None.
    earlier: NotRequired[int | None]


class PageView(TypedDict):
    """GET /t/<thread>/messages: the messages before a cursor, as a snapshot shows them (chat/store/pages.py), and
    the cursor of the page before them (None: these start at the thread's first message). Not an event."""

    thread: str
    messages: list[MessageView]
    earlier: int | None


# --- the fields of each event (chat/live/events.py builds them; the log adds `type`, `thread`, `seq`) ----------------


class ThreadCreated(TypedDict):
    title: str
    agent: AgentView | None


class ThreadModelChanged(TypedDict):
    model: ShownModelView


class ThreadToolsChanged(TypedDict):
    disabled_tools: list[str]


class ThreadRewound(TypedDict):
    message: int | None
    content: str
    removed: list[int]


class ThreadBranchChanged(TypedDict):
    message: int
    removed: list[int]
    messages: list[MessageView]
    summary: SummaryView | None


class ThreadSummarised(TypedDict):
    summary: SummarisedView


class StartedRun(TypedDict):
    id: int
    status: RunStatus
    resumed: bool


class RunStarted(TypedDict):
    run: StartedRun
    message: NotRequired[int]
    user_message: NotRequired[SentMessageView]


class RunWaiting(TypedDict):
    run: int
    tool_calls: list[str]


class RunCompleted(TypedDict):
    run: int
    reason: RunReason
    steps: int
    usage: UsageView | None


class RunFailed(TypedDict):
    run: int
    error: str


class RunCancelled(TypedDict):
    run: int


class RunNote(TypedDict):
    run: int
    text: str


class StartedMessage(TypedDict):
    id: int
    role: Role


class MessageStarted(TypedDict):
    message: StartedMessage


class MessageDelta(TypedDict):
    """message.delta and message.reasoning_delta: the next piece of a stream (the per-token path)."""

    message: int
    text: str


class MessageCompleted(TypedDict):
    """A message that ended: `finish_reason` and `usage` on a completed answer only, `structured` only on a
    structured final answer that matched its schema."""

    message: int
    content: str
    status: MessageStatus
    finish_reason: NotRequired[str | None]
    usage: NotRequired[UsageView | None]
    structured: NotRequired[JSON]


class StartedToolCall(TypedDict):
    id: str
    call_id: str
    name: str
    message: int | None


class ToolCallStarted(TypedDict):
    tool_call: StartedToolCall


class ToolCallArgsDelta(TypedDict):
    tool_call: str
    text: str


class ToolCallRequested(TypedDict):
    tool_call: str
    args: JSON


class ToolCallAwaitingApproval(TypedDict):
    tool_call: str
    allow: AllowView


class ToolCallRunning(TypedDict):
    tool_call: str


class ToolCallCompleted(TypedDict):
    tool_call: str
    status: ToolCallStatus
    content: str
    has_artifact: bool
    duration_ms: int | None
    images: NotRequired[int]  # only when the artifact holds images a card shows


class ToolCallDecided(TypedDict):
    tool_call: str
    decision: DecisionKind
    args: JSON
    original_args: JSON
    message: str | None
    by: str


class ToolCallProgress(TypedDict):
    tool_call: str
    progress: float
    total: float | None
    message: str | None


class ToolCallInputRequested(TypedDict):
    tool_call: str
    request: str
    message: str
    schema: dict[str, JSON]


class ToolCallConnectRequested(TypedDict):
    tool_call: str
    request: str
    server: str
    mode: Literal["oauth", "header"]
    url: str


class ToolCallInputAnswered(TypedDict):
    tool_call: str
    request: str
    action: InputAction
    by: str | None


# The person's list of threads: to all their tabs, carrying `thread` but no `seq` (chat/broadcast.py).


class ThreadListed(TypedDict):
    thread: str
    title: str
    agent: AgentView | None
    source: str


class ThreadRenamed(TypedDict):
    thread: str
    title: str


class ThreadDeleted(TypedDict):
    thread: str


class ThreadPinned(TypedDict):
    thread: str
    pinned: bool


class ThreadArchived(TypedDict):
    thread: str
    archived: bool


class InboxChanged(TypedDict):
    """Something in the person's approvals inbox changed (inbox/): the calls or requests named start or stop
    waiting for them. Ids only: a page reads the items themselves over HTTP (GET /inbox/items)."""

    thread: str
    change: Literal["waiting", "decided", "cancelled", "input_requested", "input_closed"]
    tool_calls: list[str]
    decision: str | None
    by: str | None


# Answers to one socket's frame.


class Error(TypedDict):
    code: str
    message: str
    ref: str | None


class Pong(TypedDict):
    pass


#: The events of a thread's history, by type: the log numbers them and adds `type`, `thread` and `seq`.
THREAD_EVENTS: dict[str, type] = {
    "thread.created": ThreadCreated,
    "thread.model_changed": ThreadModelChanged,
    "thread.tools_changed": ThreadToolsChanged,
    "thread.rewound": ThreadRewound,
    "thread.branch_changed": ThreadBranchChanged,
    "thread.summarised": ThreadSummarised,
    "run.started": RunStarted,
    "run.waiting": RunWaiting,
    "run.completed": RunCompleted,
    "run.failed": RunFailed,
    "run.cancelled": RunCancelled,
    "run.note": RunNote,
    "message.started": MessageStarted,
    "message.delta": MessageDelta,
    "message.reasoning_delta": MessageDelta,
    "message.completed": MessageCompleted,
    "tool_call.started": ToolCallStarted,
    "tool_call.args_delta": ToolCallArgsDelta,
    "tool_call.requested": ToolCallRequested,
    "tool_call.awaiting_approval": ToolCallAwaitingApproval,
    "tool_call.running": ToolCallRunning,
    "tool_call.completed": ToolCallCompleted,
    "tool_call.decided": ToolCallDecided,
    "tool_call.progress": ToolCallProgress,
    "tool_call.input_requested": ToolCallInputRequested,
    "tool_call.input_answered": ToolCallInputAnswered,
    "tool_call.connect_requested": ToolCallConnectRequested,
}

#: Events about the person's list of threads, by type: sent as `type` and these fields (no `seq`).
LIST_EVENTS: dict[str, type] = {
    "thread.listed": ThreadListed,
    "thread.renamed": ThreadRenamed,
    "thread.deleted": ThreadDeleted,
    "thread.pinned": ThreadPinned,
    "thread.archived": ThreadArchived,
    "inbox.changed": InboxChanged,
}

#: Answers to one socket's frame, by type: sent as `type` and these fields.
ANSWERS: dict[str, type] = {"error": Error, "pong": Pong}

#: The fields of any event a builder makes.
EventFields = (
    ThreadCreated
    | ThreadModelChanged
    | ThreadToolsChanged
    | ThreadRewound
    | ThreadBranchChanged
    | ThreadSummarised
    | SnapshotFields
    | RunStarted
    | RunWaiting
    | RunCompleted
    | RunFailed
    | RunCancelled
    | RunNote
    | MessageStarted
    | MessageDelta
    | MessageCompleted
    | ToolCallStarted
    | ToolCallArgsDelta
    | ToolCallRequested
    | ToolCallAwaitingApproval
    | ToolCallRunning
    | ToolCallCompleted
    | ToolCallDecided
    | ToolCallProgress
    | ToolCallInputRequested
    | ToolCallInputAnswered
    | ToolCallConnectRequested
    | ThreadListed
    | ThreadRenamed
    | ThreadDeleted
    | ThreadPinned
    | ThreadArchived
    | InboxChanged
    | Error
    | Pong
)
