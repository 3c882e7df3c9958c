"""Calls whose arguments could not be read, as a native tool-calling API is sent them back.

The model's own text of such a call (`ToolCallRequest.raw`: cut off when it ran out of output tokens, or broken
JSON) stays with the thread and on the call's card. A server that reads a history's calls refuses one whose
arguments are not a JSON object, though, on every later request of the thread: llama-server answers 500 ("Failed
to parse tool call arguments as JSON"), Anthropic wants a tool_use `input` object, Ollama an `arguments` object.
So the call goes back with empty arguments (`{}`), and what the model wrote goes into the error result answering
the call, where the model still reads it and can correct it. The text tool protocols write a call into the text
instead (providers/protocols/prompts.py) and need none of this.
"""

from __future__ import annotations

import dataclasses
import json

from .types import ChatMessage, ToolCallRequest

#: Added to the error result of a call sent back with empty arguments.
WRITTEN = "The arguments you wrote, which could not be used:\n{raw}"


def with_readable_calls(messages: list[ChatMessage]) -> list[ChatMessage]:
    """`messages` with every call's arguments an object every server accepts, and the text of arguments that
    could not be read in the result answering their call."""
    written: dict[str, str] = {}
    sendable = []
    for message in messages:
        if message.role == "assistant" and any(call.raw is not None for call in message.tool_calls):
            message = dataclasses.replace(message, tool_calls=[_readable(call, written) for call in message.tool_calls])
        elif message.role == "tool" and message.tool_call_id in written:
            raw = written.pop(message.tool_call_id)
            if raw.strip() and raw not in message.content:
                message = dataclasses.replace(message, content=f"{message.content}\n\n{WRITTEN.format(raw=raw)}")
        sendable.append(message)
    return sendable


def _readable(call: ToolCallRequest, written: dict[str, str]) -> ToolCallRequest:
    if call.raw is None:
        return call
    args = json_object(call.raw)
    if args is None:
        written[call.id] = call.raw
    return ToolCallRequest(call.id, call.name, args or {})


def json_object(text: str) -> dict | None:
    """`text` as a JSON object, or None when it is not one."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
