"""Client frames: decoded and checked against one JSON Schema per type, before any handler runs."""

from __future__ import annotations

import json
from typing import Any

from django.utils.translation import gettext_noop
from jsonschema import Draft202012Validator

from languages.phrases import Phrase

MAX_CONTENT_CHARS = 100_000
# Arrays and objects inside one another, the frame itself included. Real frames go 4 or 5 deep (edited tool
# arguments a few more); what is stored or validated later (JSON columns, tool schemas) recurses per level.
MAX_NESTING = 32
_ID = {"type": "string", "minLength": 1, "maxLength": 100}
_REF = {"type": "string", "maxLength": 100}
# A message's id as events and snapshots give it (a number), or as text.
_MESSAGE_ID = {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "minLength": 1, "maxLength": 20}]}
# A tool's name: code and HTTP tools' names are short; an MCP tool's is `<server>__<tool>`.
_TOOL = {"type": "string", "minLength": 1, "maxLength": 200}

FRAME_SCHEMAS: dict[str, dict[str, Any]] = {
    "ping": {"properties": {}},
    # issue 39, inbox: this socket wants `inbox.changed` (docs/background.md).
    "inbox.subscribe": {"properties": {}},
    "thread.subscribe": {
        "required": ["thread"],
        # `paged` (issue 42): a snapshot of the newest messages and a cursor for the earlier ones (chat/store/pages.py).
        "properties": {
            "thread": _ID,
            "after_seq": {"type": ["integer", "null"], "minimum": 0},
            "paged": {"type": "boolean"},
        },
    },
    "message.send": {
        "required": ["content", "client_msg_id"],
        "properties": {
            "thread": {"type": ["string", "null"], "maxLength": 100},
            "content": {"type": "string", "maxLength": MAX_CONTENT_CHARS},
            "client_msg_id": _ID,
            "model": {"type": ["string", "null"], "maxLength": 200},
            "agent": {"type": ["string", "null"], "maxLength": 100},
            "attachments": {"type": "array", "maxItems": 20, "items": _ID},
            "disabled_tools": {"type": "array", "maxItems": 500, "items": _TOOL},
        },
        # Text, files, or both: a message of files only has empty content.
        "if": {"not": {"required": ["attachments"], "properties": {"attachments": {"minItems": 1}}}},
        "then": {"properties": {"content": {"minLength": 1}}},
    },
    "thread.set_tool": {
        "required": ["thread", "tool", "enabled"],
        "properties": {"thread": _ID, "tool": _TOOL, "enabled": {"type": "boolean"}},
    },
    "thread.set_model": {
        "required": ["thread", "model"],
        "properties": {"thread": _ID, "model": {"type": "string", "minLength": 1, "maxLength": 200}},
    },
    "run.cancel": {"required": ["thread"], "properties": {"thread": _ID}},
    "run.retry": {"required": ["thread"], "properties": {"thread": _ID}},
    "run.regenerate": {"required": ["thread"], "properties": {"thread": _ID}},
    "message.edit_last": {
        "required": ["thread", "content", "client_msg_id"],
        "properties": {
            "thread": _ID,
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS},
            "client_msg_id": _ID,
        },
    },
    "message.edit": {
        "required": ["thread", "message", "content", "client_msg_id"],
        "properties": {
            "thread": _ID,
            "message": _MESSAGE_ID,
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS},
            "client_msg_id": _ID,
        },
    },
    "message.switch_version": {
        "required": ["thread", "message", "to"],
        "properties": {"thread": _ID, "message": _MESSAGE_ID, "to": _MESSAGE_ID},
    },
    "run.continue": {
        "required": ["thread"],
        "properties": {"thread": _ID, "steps": {"type": "integer", "minimum": 1, "maximum": 200}},
    },
    "tool_call.decide": {
        "required": ["tool_call", "decision"],
        "properties": {
            "tool_call": _ID,
            "decision": {"enum": ["approve", "edit", "reject", "respond"]},
            "args": {"type": "object"},
            "message": {"type": "string", "maxLength": MAX_CONTENT_CHARS},
            "for_thread": {"type": "boolean"},
        },
        "allOf": [
            {"if": {"properties": {"decision": {"const": "edit"}}}, "then": {"required": ["args"]}},
            {"if": {"properties": {"decision": {"const": "respond"}}}, "then": {"required": ["message"]}},
        ],
    },
    "tool_call.input": {
        "required": ["thread", "tool_call", "request", "action"],
        "properties": {
            "thread": _ID,
            "tool_call": _ID,
            "request": _ID,
            "action": {"enum": ["accept", "decline", "cancel"]},
            "content": {"type": "object"},
        },
        "allOf": [{"if": {"properties": {"action": {"const": "accept"}}}, "then": {"required": ["content"]}}],
    },
}
_VALIDATORS = {
    name: Draft202012Validator({"type": "object", **schema, "properties": {**schema["properties"], "ref": _REF}})
    for name, schema in FRAME_SCHEMAS.items()
}


class ClientError(Exception):
    """A frame the server will not act on; the client gets an `error` event and nothing is written. `message`: the
    English, marked with gettext_noop or a Phrase (languages/phrases.py), so it is said in the page's language."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def parse_frame(text: str | None, *, max_bytes: int) -> dict[str, Any]:
    if text is None:
        raise ClientError("bad_frame", "Frames must be JSON text, not binary.")
    if len(text) > max_bytes or len(text.encode()) > max_bytes:
        raise ClientError(
            "frame_too_large", Phrase(gettext_noop("Frames are limited to %(limit)s bytes."), limit=max_bytes)
        )
    frame = decode_json(text)
    if not isinstance(frame, dict):
        raise ClientError("bad_frame", "A frame must be a JSON object with a 'type'.")
    if nesting_depth(frame) > MAX_NESTING:
        raise ClientError("bad_frame", f"The frame is nested more than {MAX_NESTING} levels deep.")
    kind = frame.get("type")
    validator = _VALIDATORS.get(kind) if isinstance(kind, str) else None
    if validator is None:
        raise ClientError("unknown_type", f"Unknown frame type {str(kind)[:50]!r}.")
    too_long = _too_long_content(frame)
    if too_long is not None:
        raise ClientError("bad_frame", too_long)
    problems = [_describe(error) for error in validator.iter_errors(frame)]
    if problems:
        raise ClientError("bad_frame", "; ".join(sorted(problems)))
    return frame


def decode_json(text: str) -> Any:
    """Strict JSON: NaN and Infinity are not JSON (and PostgreSQL's jsonb refuses them)."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        # Python's decoder recurses once per level: 40,000 nested brackets exhaust the stack.
        raise ClientError("bad_json", "The frame is nested too deeply to read.") from None
    except ValueError:
        raise ClientError("bad_json", "The frame is not valid JSON.") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def nesting_depth(value: Any) -> int:
    """How many arrays and objects deep `value` goes; counted without recursion, so no depth can break it."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            deepest = max(deepest, depth)
            pending.extend((item, depth + 1) for item in value)
    return deepest


def frame_ref(text: str | None) -> str | None:
    """The `ref` of a frame, when it can be read at all, for the error it causes."""
    try:
        ref = json.loads(text or "").get("ref")
    except (ValueError, AttributeError, RecursionError):
        return None
    return ref if isinstance(ref, str) else None


def _too_long_content(frame: dict[str, Any]) -> str | None:
    """A person's message over the limit, said in words a person reads (the schema's own words quote it whole)."""
    content = frame.get("content")
    if isinstance(content, str) and len(content) > MAX_CONTENT_CHARS:
        return Phrase(
            gettext_noop("content: the message has %(length)s characters; a message can have at most %(limit)s."),
            length=len(content),
            limit=MAX_CONTENT_CHARS,
        )
    return None


def _describe(error) -> str:
    where = ".".join(str(p) for p in error.absolute_path)[:100]
    # jsonschema quotes the offending value, which may be the whole 100,000-character message.
    message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
    return f"{where}: {message}" if where else message
