"""One builder per event the server sends (docs/protocol.md, "Server → client").

Every emitter builds its events here, so an event's fields are written down once. An event is
(`type`, fields); the log (delivery/log.py) adds `thread` and `seq` when it numbers it. Each builder's fields are
a plain dict literal typed by the event's TypedDict in chat/live/views.py: no conversion or check per event (the
deltas are the per-token path).
"""

from __future__ import annotations

from typing import Any, Literal

from .views import (
    AgentView,
    AllowView,
    Error,
    EventFields,
    InboxChanged,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    MessageView,
    ModelView,
    Pong,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunNote,
    RunStarted,
    RunView,
    RunWaiting,
    SentMessageView,
    SnapshotFields,
    SummarisedView,
    SummaryView,
    ThreadArchived,
    ThreadBranchChanged,
    ThreadCreated,
    ThreadDeleted,
    ThreadListed,
    ThreadModelChanged,
    ThreadPinned,
    ThreadRenamed,
    ThreadRewound,
    ThreadSummarised,
    ThreadToolsChanged,
    ToolCallArgsDelta,
    ToolCallAwaitingApproval,
    ToolCallCompleted,
    ToolCallConnectRequested,
    ToolCallDecided,
    ToolCallInputAnswered,
    ToolCallInputRequested,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallRunning,
    ToolCallStarted,
    UsageView,
)

#: An event as its builder makes it: its type and its fields (chat/live/views.py names each event's).
Event = tuple[str, EventFields]

#: What the model is told, and a page shows, for a tool call that never finished (Stop, a restart, a failure).
INTERRUPTED_RESULT = "No result: the run stopped before this tool call finished."


# --- the thread ----------------------------------------------------------------------------


def thread_created(title: str, agent: AgentView | None = None) -> tuple[Literal["thread.created"], ThreadCreated]:
    """`agent`: the thread's agent ({slug, name}), or None."""
    return "thread.created", {"title": title, "agent": agent}


def thread_model_changed(info: ModelView) -> tuple[Literal["thread.model_changed"], ThreadModelChanged]:
    """`info`: the model as the page's list gives it; only what a tab shows is sent."""
    return "thread.model_changed", {
        "model": {
            "id": info.get("id"),
            "label": info.get("label"),
            "is_demo": info.get("is_demo"),
            "context_window": info.get("context_window"),
        }
    }


def thread_tools_changed(disabled_tools: list[str]) -> tuple[Literal["thread.tools_changed"], ThreadToolsChanged]:
    """The thread's tools turned off now (all of them, sorted), after a person turned one on or off."""
    return "thread.tools_changed", {"disabled_tools": list(disabled_tools)}


def thread_rewound(
    message: int | None, content: str, removed: list[int]
) -> tuple[Literal["thread.rewound"], ThreadRewound]:
    return "thread.rewound", {"message": message, "content": content, "removed": removed}


def thread_branch_changed(
    message: int, removed: list[int], messages: list[MessageView], summary: SummaryView | None
) -> tuple[Literal["thread.branch_changed"], ThreadBranchChanged]:
    """Another version is shown from a point of the thread on (a regenerate, an edit, a switch: chat/rewind.py).
    `message`: the version now shown there; `removed`: the ids that leave the view; `messages`: what the view shows
    from the point on, as a snapshot shows messages (with their `versions`); `summary`: the thread's summary as a
    snapshot has it, or None when the branch shown has none."""
    return "thread.branch_changed", {"message": message, "removed": removed, "messages": messages, "summary": summary}


# --- the person's list of threads: to all their tabs, not numbered (chat/broadcast.py) --------


def thread_listed(
    thread: str, title: str, agent: AgentView | None = None, source: str = "chat"
) -> tuple[Literal["thread.listed"], ThreadListed]:
    """`source`: where the thread was started (Thread.source): "api" for a program's, which the sidebar marks."""
    return "thread.listed", {"thread": thread, "title": title, "agent": agent, "source": source}


def thread_renamed(thread: str, title: str) -> tuple[Literal["thread.renamed"], ThreadRenamed]:
    return "thread.renamed", {"thread": thread, "title": title}


def thread_pinned(thread: str, pinned: bool) -> tuple[Literal["thread.pinned"], ThreadPinned]:
    return "thread.pinned", {"thread": thread, "pinned": pinned}


def thread_archived(thread: str, archived: bool) -> tuple[Literal["thread.archived"], ThreadArchived]:
    return "thread.archived", {"thread": thread, "archived": archived}


def thread_deleted(thread: str) -> tuple[Literal["thread.deleted"], ThreadDeleted]:
    return "thread.deleted", {"thread": thread}


def inbox_changed(
    thread: str, change: str, tool_calls: list[str], *, decision: str | None = None, by: str | None = None
) -> tuple[Literal["inbox.changed"], InboxChanged]:
    """The person's approvals inbox changed (chat/broadcast.py tell_inbox): ids only, never arguments or results."""
    return "inbox.changed", {
        "thread": thread,
        "change": change,
        "tool_calls": tool_calls,
        "decision": decision,
        "by": by,
    }


# --- answers to one socket's frame ---------------------------------------------------------


def error(code: str, message: str, ref: str | None) -> tuple[Literal["error"], Error]:
    return "error", {"code": code, "message": message, "ref": ref}


def pong() -> tuple[Literal["pong"], Pong]:
    return "pong", {}


def thread_snapshot(
    title: str,
    model: ModelView,
    messages: list[MessageView],
    run: RunView | None,
    agent: AgentView | None = None,
    disabled_tools: list[str] | None = None,
) -> tuple[Literal["thread.snapshot"], SnapshotFields]:
    """The thread's state, for a subscribe (chat/store/snapshot.py reads it): not numbered by the log, so the caller
    adds `thread` and the `seq` it reflects. `agent`: the thread's agent ({slug, name}), or None. `disabled_tools`:
    the names of the tools turned off for the thread."""
    return "thread.snapshot", {
        "title": title,
        "model": model,
        "messages": messages,
        "run": run,
        "agent": agent,
        "disabled_tools": list(disabled_tools or ()),
    }


# --- the run -------------------------------------------------------------------------------


def run_started(
    run: int, status: str, *, resumed: bool = False, sent: SentMessageView | None = None
) -> tuple[Literal["run.started"], RunStarted]:
    """`sent`: the user message that opened the run (message.send only), as a snapshot shows it plus its
    client_msg_id; `message` is its id (the field older pages read)."""
    fields: RunStarted = {"run": {"id": run, "status": status, "resumed": resumed}}
    if sent is not None:
        fields["message"] = sent["id"]
        fields["user_message"] = sent
    return "run.started", fields


def run_waiting(run: int, tool_calls: list[str]) -> tuple[Literal["run.waiting"], RunWaiting]:
    return "run.waiting", {"run": run, "tool_calls": tool_calls}


def run_completed(
    run: int, reason: str, steps: int, usage: UsageView | None = None
) -> tuple[Literal["run.completed"], RunCompleted]:
    """`usage`: the run's totals over its model calls (chat/usage.py)."""
    return "run.completed", {"run": run, "reason": reason, "steps": steps, "usage": usage}


def run_failed(run: int, error: str) -> tuple[Literal["run.failed"], RunFailed]:
    return "run.failed", {"run": run, "error": error}


def run_cancelled(run: int) -> tuple[Literal["run.cancelled"], RunCancelled]:
    return "run.cancelled", {"run": run}


def thread_summarised(summary: SummarisedView) -> tuple[Literal["thread.summarised"], ThreadSummarised]:
    """The thread's older turns were summarised (context strategy `summarise`): {text, before (the id of the first
    message after it, or null), usage}. The page shows it as a note; the model is sent it in their place."""
    return "thread.summarised", {"summary": summary}


def run_note(run: int, text: str) -> tuple[Literal["run.note"], RunNote]:
    return "run.note", {"run": run, "text": text}


# --- messages ------------------------------------------------------------------------------


def message_started(message: int, role: str = "assistant") -> tuple[Literal["message.started"], MessageStarted]:
    return "message.started", {"message": {"id": message, "role": role}}


def message_delta(message: int, text: str) -> tuple[Literal["message.delta"], MessageDelta]:
    return "message.delta", {"message": message, "text": text}


def message_reasoning_delta(message: int, text: str) -> tuple[Literal["message.reasoning_delta"], MessageDelta]:
    return "message.reasoning_delta", {"message": message, "text": text}


def message_completed(message: int, content: str, status: str) -> tuple[Literal["message.completed"], MessageCompleted]:
    """A message cut short (`cancelled`, `error`): the text streamed so far."""
    return "message.completed", {"message": message, "content": content, "status": status}


def answer_completed(
    message: int, content: str, finish_reason: str | None, usage: UsageView | None, structured: Any = None
) -> tuple[Literal["message.completed"], MessageCompleted]:
    """A model's answer that ended (message.completed, status `complete`). `usage`: its model call's tokens,
    {input_tokens, output_tokens, estimated}, and `cost` when its model is priced (chat/usage.py). `structured`: a
    structured final answer's JSON value (providers/structured.py), only on such an answer."""
    fields: MessageCompleted = {
        "message": message,
        "content": content,
        "status": "complete",
        "finish_reason": finish_reason,
        "usage": usage or None,
    }
    if structured is not None:
        fields["structured"] = structured
    return "message.completed", fields


# --- tool calls ----------------------------------------------------------------------------


def tool_call_started(
    tool_call: str, call_id: str, name: str, message: int | None
) -> tuple[Literal["tool_call.started"], ToolCallStarted]:
    return "tool_call.started", {"tool_call": {"id": tool_call, "call_id": call_id, "name": name, "message": message}}


def tool_call_args_delta(tool_call: str, text: str) -> tuple[Literal["tool_call.args_delta"], ToolCallArgsDelta]:
    return "tool_call.args_delta", {"tool_call": tool_call, "text": text}


def tool_call_requested(tool_call: str, args: Any) -> tuple[Literal["tool_call.requested"], ToolCallRequested]:
    return "tool_call.requested", {"tool_call": tool_call, "args": args}


def tool_call_awaiting_approval(
    tool_call: str, allow: AllowView
) -> tuple[Literal["tool_call.awaiting_approval"], ToolCallAwaitingApproval]:
    return "tool_call.awaiting_approval", {"tool_call": tool_call, "allow": allow}


def tool_call_running(tool_call: str) -> tuple[Literal["tool_call.running"], ToolCallRunning]:
    return "tool_call.running", {"tool_call": tool_call}


def tool_call_completed(
    tool_call: str,
    status: str,
    content: str,
    *,
    has_artifact: bool = False,
    duration_ms: int | None = None,
    images: int = 0,
) -> tuple[Literal["tool_call.completed"], ToolCallCompleted]:
    """`images`: how many images the artifact holds that a card shows (tools/artifacts.py); the card loads them."""
    fields: ToolCallCompleted = {
        "tool_call": tool_call,
        "status": status,
        "content": content,
        "has_artifact": has_artifact,
        "duration_ms": duration_ms,
    }
    if images:
        fields["images"] = images
    return "tool_call.completed", fields


def tool_call_progress(
    tool_call: str, progress: float, total: float | None, message: str | None
) -> tuple[Literal["tool_call.progress"], ToolCallProgress]:
    """How far a running call is, as its tool reported it (coalesced: the latest value; never stored)."""
    return "tool_call.progress", {"tool_call": tool_call, "progress": progress, "total": total, "message": message}


def tool_call_input_requested(
    tool_call: str, request: str, message: str, schema: dict[str, Any]
) -> tuple[Literal["tool_call.input_requested"], ToolCallInputRequested]:
    """A running call asks the person for input: a form built from `schema` (chat/runs/interaction.py)."""
    return "tool_call.input_requested", {
        "tool_call": tool_call,
        "request": request,
        "message": message,
        "schema": schema,
    }


def tool_call_connect_requested(
    tool_call: str, request: str, server: str, mode: str, url: str
) -> tuple[Literal["tool_call.connect_requested"], ToolCallConnectRequested]:
    """A running call waits for the person to connect their account to MCP server `server` (chat/runs/interaction.py);
    it closes with tool_call.input_answered (`accept`: they connected)."""
    return "tool_call.connect_requested", {
        "tool_call": tool_call,
        "request": request,
        "server": server,
        "mode": mode,  # type: ignore[typeddict-item]
        "url": url,
    }


def tool_call_input_answered(
    tool_call: str, request: str, action: str, by: str | None
) -> tuple[Literal["tool_call.input_answered"], ToolCallInputAnswered]:
    """The request is closed: answered by `by` (accept / decline / cancel), or cancelled by the server (`by` None:
    nobody answered in time, Stop, or the call ended)."""
    return "tool_call.input_answered", {"tool_call": tool_call, "request": request, "action": action, "by": by}


def tool_call_cancelled(tool_call: str) -> tuple[Literal["tool_call.completed"], ToolCallCompleted]:
    """A call that never finished, closed by a Stop or a failure (tool_call.completed, status `cancelled`)."""
    return tool_call_completed(tool_call, "cancelled", INTERRUPTED_RESULT)


def tool_call_decided(
    tool_call: str, decision: str, args: Any, original_args: Any, message: str | None, by: str
) -> tuple[Literal["tool_call.decided"], ToolCallDecided]:
    return "tool_call.decided", {
        "tool_call": tool_call,
        "decision": decision,
        "args": args,
        "original_args": original_args,
        "message": message,
        "by": by,
    }
