"""A thread as a file its owner downloads: JSON (every stored field a person or a script needs) and Markdown
(the same, to read). Built from the Thread, Run, Message and ToolCall rows only: no model configuration and
no tool settings, so no API key or HTTP-tool header can end up in a file. A run's model label and error are
written without URL credentials: runs recorded before those were kept out of them may still hold some."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone
from django.utils.text import slugify

from agentweb.sizes import human_size
from chat.models import Message, Run, Thread, ToolCall
from chat.store import thread_agent_info
from providers.secrets import without_url_credentials

EXPORT_FORMAT = "agentweb.thread.v1"
FILENAME_LENGTH = 60


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def export_filename(thread: Thread, extension: str) -> str:
    """The title, slugified (ASCII), else "thread-" and the start of its id."""
    slug = slugify(thread.title)[:FILENAME_LENGTH].strip("-_") or f"thread-{str(thread.pk)[:8]}"
    return f"{slug}.{extension}"


# Messages read and written this many at a time by the streamed JSON export: its memory stays flat however long
# the thread (bench/data: a 10,000-message chat).
EXPORT_BATCH = 500


def _messages(thread: Thread, *, after: int = -1, limit: int | None = None) -> list[tuple[Message, list[ToolCall]]]:
    """The messages after order `after` (at most `limit`), each with its calls: two statements. The calls are read
    for the batch and handed to each message here, not by prefetch_related, whose per-message querysets cost more
    than the rows (a 10,000-message export spent a third of its time in them)."""
    messages = Message.objects.filter(thread=thread, order__gt=after).exclude(role=Message.Role.TOOL).order_by("order")
    batch = list(messages[:limit] if limit is not None else messages)
    calls: dict[int, list[ToolCall]] = {}
    if batch:
        found = ToolCall.objects.filter(message__in=[m.pk for m in batch]).order_by("message", "index")
        for call in found.select_related("decision"):
            calls.setdefault(call.message_id, []).append(call)
    return [(message, calls.get(message.pk, [])) for message in batch]


def _head(thread: Thread) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "exported_at": _time(timezone.now()),
        "thread": {
            "id": str(thread.pk),
            "title": thread.title,
            # The thread's agent ({slug, name}), or null (docs/agents.md).
            "agent": thread_agent_info(thread),
            "created_at": _time(thread.created_at),
            "updated_at": _time(thread.updated_at),
        },
        "runs": [_run(run) for run in Run.objects.filter(thread=thread).order_by("started_at", "id")],
    }


def thread_export(thread: Thread) -> dict[str, Any]:
    """The thread's messages in order (tool results are on their calls, as in the live view), with the runs."""
    return {**_head(thread), "messages": [_message(message, calls) for message, calls in _messages(thread)]}


def _run(run: Run) -> dict[str, Any]:
    return {
        "id": run.pk,
        "status": run.status,
        "reason": run.reason or None,
        "error": without_url_credentials(run.error) or None,
        "steps": run.steps,
        "model": without_url_credentials(run.model_label),
        "started_at": _time(run.started_at),
        "finished_at": _time(run.finished_at),
        "notes": run.notes,
    }


def _message(message: Message, calls: list[ToolCall]) -> dict[str, Any]:
    return {
        "id": message.pk,
        "role": message.role,
        "content": message.content,
        "status": message.status,
        "finish_reason": message.finish_reason or None,
        "created_at": _time(message.created_at),
        "run": message.run_id,
        "usage": message.usage,
        # A user message's files, named with their sizes (attachments/services.py summary); the files themselves
        # are not in the export.
        "attachments": [
            {key: item.get(key) for key in ("name", "content_type", "size", "capped_at")}
            for item in message.attachments or []
        ],
        "tool_calls": [_tool_call(call) for call in calls],
    }


def _tool_call(call: ToolCall) -> dict[str, Any]:
    decision = getattr(call, "decision", None)
    return {
        "id": str(call.pk),
        "call_id": call.call_id,
        "name": call.name,
        "arguments": call.args,
        "original_arguments": call.original_args,
        "status": call.status,
        "result": call.result if call.status == ToolCall.Status.SUCCESS else None,
        "error": call.error or None,
        "created_at": _time(call.created_at),
        "started_at": _time(call.started_at),
        "finished_at": _time(call.finished_at),
        "duration_ms": call.duration_ms,
        "decision": None
        if decision is None
        else {"decision": decision.decision, "message": decision.message, "decided_at": _time(decision.decided_at)},
    }


def export_json(thread: Thread) -> str:
    return "".join(export_json_chunks(thread))


def export_json_chunks(thread: Thread) -> Iterator[str]:
    """export_json's text, piece by piece: the messages EXPORT_BATCH at a time, so that a long thread's export never
    holds all of them at once (the same bytes as json.dumps of thread_export, indent 2)."""
    head = json.dumps({**_head(thread), "messages": [None]}, indent=2, ensure_ascii=False)
    before, after = head.rsplit("null", 1)  # "messages" is the last key: its placeholder is the last null
    last, first = -1, True
    while True:
        batch = list(_messages(thread, after=last, limit=EXPORT_BATCH))
        if not batch:
            break
        pieces = [
            json.dumps(_message(m, calls), indent=2, ensure_ascii=False).replace("\n", "\n    ") for m, calls in batch
        ]
        yield (before if first else ",\n    ") + ",\n    ".join(pieces)
        first, last = False, batch[-1][0].order
    # No message: the empty list as json.dumps writes it.
    yield before.rstrip() + "]\n}\n" if first else after + "\n"


# --- Markdown ---------------------------------------------------------------------------------------------

ROLE_HEADINGS = {"user": "User", "assistant": "Assistant", "system": "System"}


def _fence(text: str, language: str = "") -> str:
    """A code block that the text cannot close: the fence is longer than any run of backticks inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _when(value: str | None) -> str:
    """An exported time as a person reads it: to the second, in UTC, named (the JSON keeps it exact)."""
    if not value:
        return "—"
    return datetime.fromisoformat(value).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _duration(ms: int | None) -> str:
    if ms is None:
        return ""
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def export_markdown(thread: Thread) -> str:
    data = thread_export(thread)
    title = " ".join((data["thread"]["title"] or "Untitled").split())
    out = [
        f"# {title}",
        "",
        f"- Thread: `{data['thread']['id']}`",
        *([f"- Agent: {data['thread']['agent']['name']}"] if data["thread"]["agent"] else []),
        f"- Created: {_when(data['thread']['created_at'])}",
        f"- Exported: {_when(data['exported_at'])}",
        "",
    ]
    for message in data["messages"]:
        out += _markdown_message(message)
    if data["runs"]:
        out += ["## Runs", ""]
        out += [_markdown_run(run) for run in data["runs"]]
        out.append("")
    return "\n".join(out)


def _markdown_message(message: dict[str, Any]) -> list[str]:
    heading = ROLE_HEADINGS.get(message["role"], message["role"].title())
    details = [_when(message["created_at"])]
    if message["run"] is not None:
        details.append(f"run {message['run']}")
    if message["status"] != "complete":
        details.append(message["status"])
    out = ["---", "", f"## {heading} · {' · '.join(details)}", ""]
    if message["content"]:
        out += [message["content"], ""]
    if message.get("attachments"):
        out += [f"- 📎 {_attachment_line(item)}" for item in message["attachments"]] + [""]
    for call in message["tool_calls"]:
        out += _markdown_tool_call(call)
    return out


def _attachment_line(item: dict[str, Any]) -> str:
    line = f"{item['name']} ({item['content_type']}, {human_size(item['size'])})"
    if item.get("capped_at"):
        line += f", the model read its first {item['capped_at']:,} characters"
    return line


def _markdown_tool_call(call: dict[str, Any]) -> list[str]:
    summary = ", ".join(part for part in [call["status"], _duration(call["duration_ms"])] if part)
    out = [
        f"### Tool call `{call['name']}` — {summary}",
        "",
        f"- Call id: `{call['call_id']}`",
        f"- Started: {_when(call['started_at'])}; finished: {_when(call['finished_at'])}",
    ]
    if call["decision"]:
        decision = call["decision"]
        said = f" ({' '.join(decision['message'].split())})" if decision["message"] else ""
        out.append(f"- Decision: {decision['decision']}{said}, {_when(decision['decided_at'])}")
    arguments = call["arguments"]
    if isinstance(arguments, str):  # the model's own text of arguments that could not be read: as it wrote it
        out += ["", "Arguments:", "", _fence(arguments), ""]
    else:
        out += ["", "Arguments:", "", _fence(json.dumps(arguments, indent=2, ensure_ascii=False), "json"), ""]
    if call["original_arguments"] is not None:
        original = json.dumps(call["original_arguments"], indent=2, ensure_ascii=False)
        out += ["Arguments as the model wrote them:", "", _fence(original, "json"), ""]
    if call["result"] is not None:
        out += ["Result:", "", _fence(call["result"]), ""]
    if call["error"] is not None:
        out += ["Error:", "", _fence(call["error"]), ""]
    return out


def _markdown_run(run: dict[str, Any]) -> str:
    parts = [run["status"] + (f" ({run['reason']})" if run["reason"] else "")]
    parts.append(f"{run['steps']} step{'s' if run['steps'] != 1 else ''}")
    if run["model"]:
        parts.append(f"model {run['model']}")
    parts.append(f"started {_when(run['started_at'])}, finished {_when(run['finished_at'])}")
    line = f"- Run {run['id']}: " + ", ".join(parts)
    if run["error"]:
        line += f". Error: {' '.join(run['error'].split())}"
    return line
