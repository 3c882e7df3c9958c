"""Client frames: decoded and checked against one JSON Schema per type, before any handler runs."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

MAX_CONTENT_CHARS = 100_000
_ID = {"type": "string", "minLength": 1, "maxLength": 100}
_REF = {"type": "string", "maxLength": 100}

FRAME_SCHEMAS: dict[str, dict[str, Any]] = {
    "ping": {"properties": {}},
    "thread.subscribe": {
        "required": ["thread"],
        "properties": {"thread": _ID, "after_seq": {"type": ["integer", "null"], "minimum": 0}},
    },
    "message.send": {
        "required": ["content", "client_msg_id"],
        "properties": {
            "thread": {"type": ["string", "null"], "maxLength": 100},
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS},
            "client_msg_id": _ID,
            "model": {"type": ["string", "null"], "maxLength": 200},
        },
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
}
_VALIDATORS = {
    name: Draft202012Validator({"type": "object", **schema, "properties": {**schema["properties"], "ref": _REF}})
    for name, schema in FRAME_SCHEMAS.items()
}


class ClientError(Exception):
    """A frame the server will not act on; the client gets an `error` event and nothing is written."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def parse_frame(text: str | None, *, max_bytes: int) -> dict[str, Any]:
    if text is None:
        raise ClientError("bad_frame", "Frames must be JSON text, not binary.")
    if len(text) > max_bytes or len(text.encode()) > max_bytes:
        raise ClientError("frame_too_large", f"Frames are limited to {max_bytes} bytes.")
    try:
        frame = json.loads(text)
    except ValueError:
        raise ClientError("bad_json", "The frame is not valid JSON.") from None
    if not isinstance(frame, dict):
        raise ClientError("bad_frame", "A frame must be a JSON object with a 'type'.")
    validator = _VALIDATORS.get(frame.get("type"))  # type: ignore[arg-type]
    if validator is None:
        raise ClientError("unknown_type", f"Unknown frame type {str(frame.get('type'))[:50]!r}.")
    problems = [_describe(error) for error in validator.iter_errors(frame)]
    if problems:
        raise ClientError("bad_frame", "; ".join(sorted(problems)))
    return frame


def frame_ref(text: str | None) -> str | None:
    """The `ref` of a frame, when it can be read at all, for the error it causes."""
    try:
        ref = json.loads(text or "").get("ref")
    except (ValueError, AttributeError):
        return None
    return ref if isinstance(ref, str) else None


def _describe(error) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message
