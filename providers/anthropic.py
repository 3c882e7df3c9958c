"""Provider for the Anthropic Messages API (POST /v1/messages, streamed as server-sent events).

The stream is a sequence of content blocks (text, thinking, tool_use), each opened, filled with deltas
and closed, framed by message_start / message_delta / message_stop; see the conformance vectors in
shared/vectors/anthropic_messages_sse.json. Tool calls use the block index as their index.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from .context import context_filled_message
from .http_provider import DEFAULT_TOTAL_TIMEOUT, HTTPProvider
from .sse import SSEDecoder, SSEEvent
from .stream import OUT_OF_TOKENS, WireReader, decode_args, read_stream
from .structured import FINAL_ANSWER_TOOL, AnswerFormat, with_final_answer
from .types import (
    ChatMessage,
    Finish,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
    Usage,
)
from .unreadable_calls import with_readable_calls

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
STREAM_ENDED_MID_CALL = "The answer ended before this call was complete"
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
# Mid-stream errors worth another attempt (if nothing was shown yet): the same as 529, 500 and 429.
_RETRYABLE_ERRORS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429}


class AnthropicProvider(HTTPProvider):
    path = "/v1/messages"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        model: str,
        api_key: str | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
        top_p: float | None = None,
        client: httpx.AsyncClient | None = None,
        transport: str = "streaming",
        timeout: float | None = DEFAULT_TOTAL_TIMEOUT,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> None:
        super().__init__(
            base_url=base_url,
            model=model,
            api_key=api_key,
            client=client,
            transport=transport,
            timeout=timeout,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
        )
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_p = top_p

    def endpoint(self, base_url: str) -> str:
        base = base_url.rstrip("/")
        # "https://api.anthropic.com/v1" is a natural thing to configure; do not ask for /v1/v1/messages.
        return base.removesuffix("/v1") + self.path

    def request_headers(self) -> dict[str, str]:
        headers = {
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def request_body(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: AnswerFormat | None = None
    ) -> dict[str, Any]:
        """`answer`: the final_answer tool (providers/structured.py), forced with `tool_choice` when the step must
        answer or it is the only tool."""
        tools = with_final_answer(tools, answer)
        system, wire = messages_to_wire(messages)
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "stream": True}
        if system:
            body["system"] = system
        body["messages"] = wire
        if tools:
            body["tools"] = [tool_to_wire(t) for t in tools]
        if answer is not None and len(tools) == 1:
            body["tool_choice"] = {"type": "tool", "name": FINAL_ANSWER_TOOL}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.top_p is not None:
            body["top_p"] = self.top_p
        return body

    def read_events(self, chunks: AsyncIterator[bytes], tools: list[ToolDefinition]) -> AsyncIterator[StreamEvent]:
        return read_stream(MessageReader(self), chunks)


# --- request -------------------------------------------------------------------------------------


def messages_to_wire(messages: list[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """The top-level system prompt and the messages in Anthropic's shape.

    System messages, wherever they are, go to the top-level `system` field. Tool results become
    `tool_result` blocks of a user message; consecutive ones (and a user message after them) share one.
    """
    system: list[str] = []
    wire: list[dict[str, Any]] = []
    for message in with_readable_calls(messages):
        if message.role == "system":
            if message.content:
                system.append(message.content)
        elif message.role == "tool":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            if message.content:
                block["content"] = message.content
            block["is_error"] = message.status == "error"
            _append(wire, "user", [block])
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.args} for c in message.tool_calls]
            _append(wire, "assistant", blocks)  # an empty assistant turn (nothing said, nothing called) is left out
        elif message.content or message.images:
            # Images first, as Anthropic's guide suggests, then the text.
            user_blocks: list[dict[str, Any]] = [
                {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}
                for image in message.images
            ]
            if message.content:
                user_blocks.append({"type": "text", "text": message.content})
            _append(wire, "user", user_blocks)
    for item in wire:
        content = item["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            item["content"] = content[0]["text"]  # the plain form for a plain message
    return "\n\n".join(system), wire


def _append(wire: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if wire and wire[-1]["role"] == role:
        wire[-1]["content"].extend(blocks)
    else:
        wire.append({"role": role, "content": list(blocks)})


def tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    schema = dict(tool.parameters or {})
    schema.setdefault("type", "object")  # Anthropic insists on an object schema at the root
    wire: dict[str, Any] = {"name": tool.name}
    if tool.description:
        wire["description"] = tool.description
    wire["input_schema"] = schema
    return wire


# --- stream --------------------------------------------------------------------------------------


class MessageReader(WireReader):
    """The Messages API's stream: server-sent events, each one JSON object, up to `message_stop`."""

    end_marker = "a stop reason (no message_stop)"

    def __init__(self, provider: AnthropicProvider) -> None:
        super().__init__(provider)
        self.provider: AnthropicProvider = provider
        self.assembler = MessageAssembler()

    def frames(self) -> SSEDecoder:
        return SSEDecoder()

    def feed(self, sse: SSEEvent) -> list[StreamEvent]:
        payload = self.json_object(sse.data)
        payload.setdefault("type", sse.event)
        if payload["type"] == "error":
            kind = (payload.get("error") or {}).get("type") if isinstance(payload.get("error"), dict) else None
            status, retryable = _RETRYABLE_ERRORS.get(kind or ""), kind in _RETRYABLE_ERRORS
            raise self.reported_error(payload, sse.data, status=status, retryable=retryable)
        events = self.assembler.feed(payload)
        self.ended = self.assembler.stopped
        return events

    @property
    def complete(self) -> bool:
        return self.assembler.complete

    def finish(self) -> list[StreamEvent]:
        return self.assembler.finish()

    async def check_finish(self, finish: Finish, usage: Usage) -> None:
        if self.assembler.context_exceeded:
            # The answer filled the model's whole window (models that stop there instead of failing the request):
            # an error the person can act on, as "length" without an output limit on OpenAI.
            message = context_filled_message(usage.input_tokens, usage.output_tokens, self.provider.max_tokens)
            raise self.error(message)


@dataclass
class _Call:
    id: str
    name: str
    initial: Any = None  # the `input` of content_block_start: {} from the API, the whole input from some proxies
    parts: list[str] = field(default_factory=list)


class MessageAssembler:
    """Turns decoded Messages-API stream events into neutral stream events, one event at a time."""

    def __init__(self) -> None:
        self._open: dict[int, _Call] = {}  # tool_use blocks started and not yet stopped
        self._held: list[ToolCallEnd] = []  # closed with unusable JSON: a max_tokens may still explain why
        self._calls = 0
        self._text_seen = False
        self._stop_reason: str | None = None
        self._stop_details: dict[str, Any] = {}
        self._input_tokens: int | None = None
        self._output_tokens: int | None = None
        self.stopped = False  # message_stop arrived

    @property
    def complete(self) -> bool:
        return self.stopped or self._stop_reason is not None

    def feed(self, payload: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        kind = payload.get("type")
        if kind == "content_block_delta":
            self._delta(payload, events)
        elif kind == "content_block_start":
            self._flush_held(events)
            self._block_start(payload, events)
        elif kind == "content_block_stop":
            self._block_stop(payload, events)
        elif kind == "message_start":
            self._usage((payload.get("message") or {}).get("usage"))
        elif kind == "message_delta":
            self._message_delta(payload, events)
        elif kind == "message_stop":
            self.stopped = True
        # ping, and event types added after this was written, are ignored as the API's versioning asks.
        return events

    def finish(self) -> list[StreamEvent]:
        """The stream ended: close every call, then usage, then the finish reason."""
        events: list[StreamEvent] = []
        for index in sorted(self._open):
            call = self._open.pop(index)
            raw = "".join(call.parts)
            if self._stop_reason == "max_tokens":
                args, error = None, OUT_OF_TOKENS  # cut off inside the call: never run it
            else:
                args, error = decode_args(raw)
                if error:
                    args, error = None, STREAM_ENDED_MID_CALL
            events.append(ToolCallEnd(index=index, id=call.id, name=call.name, raw=raw, args=args, error=error))
        self._flush_held(events)
        if self._input_tokens is not None or self._output_tokens is not None:
            events.append(Usage(input_tokens=self._input_tokens, output_tokens=self._output_tokens))
        events.append(Finish(self._normalised_reason()))
        return events

    def _block_start(self, payload: dict[str, Any], events: list[StreamEvent]) -> None:
        block = payload.get("content_block") or {}
        index = self._index(payload)
        kind = block.get("type")
        if kind == "text":
            self._text(block.get("text"), events)
        elif kind == "thinking":
            _reasoning(block.get("thinking"), events)
        elif kind == "tool_use" and index not in self._open:
            call = _Call(id=block.get("id") or f"toolu_{secrets.token_hex(12)}", name=block.get("name") or "")
            call.initial = block.get("input")
            self._open[index] = call
            self._calls += 1
            events.append(ToolCallStart(index=index, id=call.id, name=call.name))
        # server_tool_use, redacted_thinking and other blocks are not for us to show or run.

    def _delta(self, payload: dict[str, Any], events: list[StreamEvent]) -> None:
        delta = payload.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            self._text(delta.get("text"), events)
        elif kind == "input_json_delta":
            call = self._open.get(self._index(payload))
            partial = delta.get("partial_json")
            if call is not None and partial and isinstance(partial, str):
                call.parts.append(partial)
                events.append(ToolCallArgsDelta(self._index(payload), partial))
        elif kind == "thinking_delta":
            _reasoning(delta.get("thinking"), events)

    def _block_stop(self, payload: dict[str, Any], events: list[StreamEvent]) -> None:
        index = self._index(payload)
        call = self._open.pop(index, None)
        if call is None:
            return
        if not call.parts and isinstance(call.initial, dict) and call.initial:
            # The whole input came with the start (a proxy, not the API): stream it as the argument text.
            call.parts.append(json.dumps(call.initial, ensure_ascii=False))
            events.append(ToolCallArgsDelta(index, call.parts[0]))
        raw = "".join(call.parts)
        args, error = decode_args(raw)  # "" → {}: a call without arguments sends only an empty partial_json
        end = ToolCallEnd(index=index, id=call.id, name=call.name, raw=raw, args=args, error=error)
        if error:
            self._held.append(end)
        else:
            events.append(end)

    def _message_delta(self, payload: dict[str, Any], events: list[StreamEvent]) -> None:
        delta = payload.get("delta") or {}
        if delta.get("stop_reason"):
            self._stop_reason = delta["stop_reason"]
        if isinstance(delta.get("stop_details"), dict):
            self._stop_details = delta["stop_details"]
        self._usage(payload.get("usage"))
        if self._stop_reason == "max_tokens":
            self._held = [
                ToolCallEnd(e.index, e.id, e.name, e.raw, None, OUT_OF_TOKENS) for e in self._held
            ]  # its JSON was cut off by the limit, not written badly
        self._flush_held(events)
        explanation = self._stop_details.get("explanation")
        if self._stop_reason == "refusal" and not self._text_seen and isinstance(explanation, str) and explanation:
            # Shown as the answer, as OpenAI's delta.refusal is: otherwise the person would see nothing at all.
            self._text(explanation, events)

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        if isinstance(usage.get("input_tokens"), int):
            # Cached prompt tokens are billed apart but are part of the prompt the model read.
            cached = (usage.get("cache_creation_input_tokens") or 0) + (usage.get("cache_read_input_tokens") or 0)
            self._input_tokens = usage["input_tokens"] + cached
        if isinstance(usage.get("output_tokens"), int):
            self._output_tokens = usage["output_tokens"]

    def _text(self, text: Any, events: list[StreamEvent]) -> None:
        if text and isinstance(text, str):
            self._text_seen = True
            events.append(TextDelta(text))

    def _flush_held(self, events: list[StreamEvent]) -> None:
        events.extend(self._held)
        self._held = []

    def _index(self, payload: dict[str, Any]) -> int:
        index = payload.get("index")
        return index if isinstance(index, int) else 0

    @property
    def context_exceeded(self) -> bool:
        return self._stop_reason == "model_context_window_exceeded"

    def _normalised_reason(self) -> str:
        if self._stop_reason is None:
            return "tool_calls" if self._calls else "stop"
        return _STOP_REASONS.get(self._stop_reason, "other")


def _reasoning(text: Any, events: list[StreamEvent]) -> None:
    if text and isinstance(text, str):
        events.append(ReasoningDelta(text))
