"""One builder per event the server sends (docs/protocol.md, "Server → client").

Every emitter builds its events here, so an event's fields are written down once. An event is
(`type`, fields); the log (chat/live/log.py) adds `thread` and `seq` when it numbers it.
"""

from __future__ import annotations

from typing import Any

Event = tuple[str, dict[str, Any]]

#: What the model is told, and a page shows, for a tool call that never finished (Stop, a restart, a failure).
INTERRUPTED_RESULT = "No result: the run stopped before this tool call finished."


# --- the thread ----------------------------------------------------------------------------


def thread_created(title: str, agent: dict[str, str] | None = None) -> Event:
    """`agent`: the thread's agent ({slug, name}), or None."""
    return "thread.created", {"title": title, "agent": agent}


def thread_model_changed(info: dict[str, Any]) -> Event:
    """`info`: the model as the page's list gives it; only what a tab shows is sent."""
    return "thread.model_changed", {
        "model": {key: info.get(key) for key in ("id", "label", "is_demo", "context_window")}
    }


def thread_tools_changed(disabled_tools: list[str]) -> Event:
    """The thread's tools turned off now (all of them, sorted), after a person turned one on or off."""
    return "thread.tools_changed", {"disabled_tools": list(disabled_tools)}


def thread_rewound(message: int | None, content: str, removed: list[int]) -> Event:
    return "thread.rewound", {"message": message, "content": content, "removed": removed}


def thread_branch_changed(
    message: int, removed: list[int], messages: list[dict[str, Any]], summary: dict[str, Any] | None
) -> Event:
    """Another version is shown from a point of the thread on (a regenerate, an edit, a switch: chat/rewind.py).
    `message`: the version now shown there; `removed`: the ids that leave the view; `messages`: what the view shows
    from the point on, as a snapshot shows messages (with their `versions`); `summary`: the thread's summary as a
    snapshot has it, or None when the branch shown has none."""
    return "thread.branch_changed", {"message": message, "removed": removed, "messages": messages, "summary": summary}


# --- the person's list of threads: to all their tabs, not numbered (chat/broadcast.py) --------


def thread_listed(thread: str, title: str, agent: dict[str, str] | None = None) -> Event:
    return "thread.listed", {"thread": thread, "title": title, "agent": agent}


def thread_renamed(thread: str, title: str) -> Event:
    return "thread.renamed", {"thread": thread, "title": title}


def thread_pinned(thread: str, pinned: bool) -> Event:
    return "thread.pinned", {"thread": thread, "pinned": pinned}


def thread_archived(thread: str, archived: bool) -> Event:
    return "thread.archived", {"thread": thread, "archived": archived}


def thread_deleted(thread: str) -> Event:
    return "thread.deleted", {"thread": thread}


# --- answers to one socket's frame ---------------------------------------------------------


def error(code: str, message: str, ref: str | None) -> Event:
    return "error", {"code": code, "message": message, "ref": ref}


def pong() -> Event:
    return "pong", {}


def thread_snapshot(
    title: str,
    model: dict[str, Any],
    messages: list[dict],
    run: dict[str, Any] | None,
    agent: dict[str, str] | None = None,
    disabled_tools: list[str] | None = None,
) -> Event:
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


def run_started(run: int, status: str, *, resumed: bool = False, sent: dict[str, Any] | None = None) -> Event:
    """`sent`: the user message that opened the run (message.send only), as a snapshot shows it plus its
    client_msg_id; `message` is its id (the field older pages read)."""
    fields: dict[str, Any] = {"run": {"id": run, "status": status, "resumed": resumed}}
    if sent is not None:
        fields["message"] = sent["id"]
        fields["user_message"] = sent
    return "run.started", fields


def run_waiting(run: int, tool_calls: list[str]) -> Event:
    return "run.waiting", {"run": run, "tool_calls": tool_calls}


def run_completed(run: int, reason: str, steps: int, usage: dict | None = None) -> Event:
    """`usage`: the run's totals over its model calls (chat/usage.py)."""
    return "run.completed", {"run": run, "reason": reason, "steps": steps, "usage": usage}


def run_failed(run: int, error: str) -> Event:
    return "run.failed", {"run": run, "error": error}


def run_cancelled(run: int) -> Event:
    return "run.cancelled", {"run": run}


def thread_summarised(summary: dict[str, Any]) -> Event:
    """The thread's older turns were summarised (context strategy `summarise`): {text, before (the id of the first
    message after it, or null), usage}. The page shows it as a note; the model is sent it in their place."""
    return "thread.summarised", {"summary": summary}


def run_note(run: int, text: str) -> Event:
    return "run.note", {"run": run, "text": text}


# --- messages ------------------------------------------------------------------------------


def message_started(message: int, role: str = "assistant") -> Event:
    return "message.started", {"message": {"id": message, "role": role}}


def message_delta(message: int, text: str) -> Event:
    return "message.delta", {"message": message, "text": text}


def message_reasoning_delta(message: int, text: str) -> Event:
    return "message.reasoning_delta", {"message": message, "text": text}


def message_completed(message: int, content: str, status: str) -> Event:
    """A message cut short (`cancelled`, `error`): the text streamed so far."""
    return "message.completed", {"message": message, "content": content, "status": status}


def answer_completed(
    message: int, content: str, finish_reason: str | None, usage: dict | None, structured: Any = None
) -> Event:
    """A model's answer that ended (message.completed, status `complete`). `usage`: its model call's tokens,
    {input_tokens, output_tokens, estimated}, and `cost` when its model is priced (chat/usage.py). `structured`: a
    structured final answer's JSON value (providers/structured.py), only on such an answer."""
    fields = {
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


def tool_call_started(tool_call: str, call_id: str, name: str, message: int | None) -> Event:
    return "tool_call.started", {"tool_call": {"id": tool_call, "call_id": call_id, "name": name, "message": message}}


def tool_call_args_delta(tool_call: str, text: str) -> Event:
    return "tool_call.args_delta", {"tool_call": tool_call, "text": text}


def tool_call_requested(tool_call: str, args: Any) -> Event:
    return "tool_call.requested", {"tool_call": tool_call, "args": args}


def tool_call_awaiting_approval(tool_call: str, allow: dict[str, bool]) -> Event:
    return "tool_call.awaiting_approval", {"tool_call": tool_call, "allow": allow}


def tool_call_running(tool_call: str) -> Event:
    return "tool_call.running", {"tool_call": tool_call}


def tool_call_completed(
    tool_call: str,
    status: str,
    content: str,
    *,
    has_artifact: bool = False,
    duration_ms: int | None = None,
    images: int = 0,
) -> Event:
    """`images`: how many images the artifact holds that a card shows (tools/artifacts.py); the card loads them."""
    fields = {
        "tool_call": tool_call,
        "status": status,
        "content": content,
        "has_artifact": has_artifact,
        "duration_ms": duration_ms,
    }
    if images:
        fields["images"] = images
    return "tool_call.completed", fields


def tool_call_progress(tool_call: str, progress: float, total: float | None, message: str | None) -> Event:
    """How far a running call is, as its tool reported it (coalesced: the latest value; never stored)."""
    return "tool_call.progress", {"tool_call": tool_call, "progress": progress, "total": total, "message": message}


def tool_call_input_requested(tool_call: str, request: str, message: str, schema: dict[str, Any]) -> Event:
    """A running call asks the person for input: a form built from `schema` (chat/runs/interaction.py)."""
    return "tool_call.input_requested", {
        "tool_call": tool_call,
        "request": request,
        "message": message,
        "schema": schema,
    }


def tool_call_input_answered(tool_call: str, request: str, action: str, by: str | None) -> Event:
    """The request is closed: answered by `by` (accept / decline / cancel), or cancelled by the server (`by` None:
    nobody answered in time, Stop, or the call ended)."""
    return "tool_call.input_answered", {"tool_call": tool_call, "request": request, "action": action, "by": by}


def tool_call_cancelled(tool_call: str) -> Event:
    """A call that never finished, closed by a Stop or a failure (tool_call.completed, status `cancelled`)."""
    return tool_call_completed(tool_call, "cancelled", INTERRUPTED_RESULT)


def tool_call_decided(
    tool_call: str, decision: str, args: Any, original_args: Any, message: str | None, by: str
) -> Event:
    return "tool_call.decided", {
        "tool_call": tool_call,
        "decision": decision,
        "args": args,
        "original_args": original_args,
        "message": message,
        "by": by,
    }
