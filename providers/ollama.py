"""Provider for Ollama's native chat API (POST /api/chat, streamed as newline-delimited JSON).

Each line is one JSON object: `message.content` / `message.thinking` pieces, whole tool calls in
`message.tool_calls` (arguments as an object, from some models and proxies as a JSON string, never with
an id), and a last line with `done: true`, `done_reason` and the token counts. See the conformance vectors
in shared/vectors/ollama_api_chat_ndjson.json.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from typing import Any

import httpx

from .http_provider import DEFAULT_TOTAL_TIMEOUT, HTTPProvider
from .ndjson import NDJSONDecoder
from .stream import NO_FUNCTION_NAME, WireReader, decode_args, read_stream
from .structured import AnswerFormat
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

DEFAULT_BASE_URL = "http://localhost:11434"
_DONE_REASONS = {"stop": "stop", "length": "length"}


class OllamaProvider(HTTPProvider):
    path = "/api/chat"
    json_answer_is_error = False  # a server that ignores "stream" answers with one JSON object: one line

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        model: str,
        client: httpx.AsyncClient | None = None,
        transport: str = "streaming",
        options: dict[str, Any] | None = None,
        api_key: str | None = None,
        timeout: float | None = DEFAULT_TOTAL_TIMEOUT,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> None:
        super().__init__(
            base_url=base_url,
            model=model,
            api_key=api_key,  # only for an Ollama behind an authenticating proxy, or ollama.com
            client=client,
            transport=transport,
            timeout=timeout,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
        )
        #: Ollama's model options, e.g. {"temperature": 0.2, "num_ctx": 8192}.
        self.options = options

    def endpoint(self, base_url: str) -> str:
        # The OpenAI-compatible address (…:11434/v1) is what many people have configured: same server.
        return base_url.rstrip("/").removesuffix("/v1").removesuffix("/api") + self.path

    def request_headers(self) -> dict[str, str]:
        headers = {"Accept": "application/x-ndjson"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def answers_with_tool(self, answer: AnswerFormat) -> bool:
        return False

    def request_body(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: AnswerFormat | None = None
    ) -> dict[str, Any]:
        """`answer`: `format` is the schema; on the step that must answer no tools are offered (Ollama has no
        tool_choice)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [message_to_wire(m) for m in with_readable_calls(messages)],
            "stream": True,
        }
        if answer is not None:
            body["format"] = answer.schema
            if answer.force:
                tools = []
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
        if self.options:
            body["options"] = self.options
        return body

    def read_events(self, chunks: AsyncIterator[bytes], tools: list[ToolDefinition]) -> AsyncIterator[StreamEvent]:
        return read_stream(ChatReader(self, tools), chunks)


def message_to_wire(message: ChatMessage) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "content": message.content, "tool_name": message.name or ""}
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.images:
        wire["images"] = [image.data for image in message.images]  # base64, Ollama's format
    if message.role == "assistant" and message.tool_calls:
        wire["tool_calls"] = [{"function": {"name": c.name, "arguments": c.args}} for c in message.tool_calls]
    return wire


class ChatReader(WireReader):
    """/api/chat's stream: JSON lines, up to the one with `done: true`."""

    end_marker = "its last line (done: true)"
    frame_name = "line"

    def __init__(self, provider: OllamaProvider, tools: list[ToolDefinition]) -> None:
        super().__init__(provider)
        self.assembler = ChatAssembler(tools)

    def frames(self) -> NDJSONDecoder:
        return NDJSONDecoder()

    def feed(self, line: str) -> list[StreamEvent]:
        chunk = self.json_object(line)
        if chunk.get("error"):
            raise self.reported_error(chunk, line)
        events = self.assembler.feed(chunk)
        self.ended = self.assembler.done
        return events

    def finish(self) -> list[StreamEvent]:
        return self.assembler.finish()

    def shown(self, frame_text: str) -> str:
        return frame_text.strip()


class ChatAssembler:
    """Turns /api/chat stream objects into neutral stream events, one object at a time."""

    def __init__(self, tools: list[ToolDefinition]) -> None:
        # Tools that really take a "functionName" argument keep it (see _arguments).
        self._takes_function_name = {
            t.name for t in tools if "functionName" in ((t.parameters or {}).get("properties") or {})
        }
        self._calls = 0
        self._done_reason: str | None = None
        self._usage: Usage | None = None
        self.done = False

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        message = chunk.get("message")
        if not isinstance(message, dict):
            message = {}  # the last line of a stream may carry only the counts
        thinking, content = message.get("thinking"), message.get("content")
        if thinking and isinstance(thinking, str):
            events.append(ReasoningDelta(thinking))
        loading = chunk.get("done_reason") == "load"  # the model was loaded first; the answer is still to come
        if content and isinstance(content, str) and not (loading and not content.strip()):
            events.append(TextDelta(content))
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict):
                self._call(call, events)
        if chunk.get("done") and not loading:
            self.done = True
            self._done_reason = chunk.get("done_reason")
            prompt, output = chunk.get("prompt_eval_count"), chunk.get("eval_count")
            if isinstance(prompt, int) or isinstance(output, int):
                self._usage = Usage(input_tokens=prompt, output_tokens=output)
        return events

    def finish(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._usage is not None:
            events.append(self._usage)
        events.append(Finish(self._normalised_reason()))
        return events

    def _call(self, call: dict[str, Any], events: list[StreamEvent]) -> None:
        function = call.get("function") or {}
        name = function.get("name") or ""
        arguments = function.get("arguments")
        if arguments is None:
            raw = ""
        elif isinstance(arguments, str):
            raw = arguments
        else:
            raw = json.dumps(arguments, ensure_ascii=False)
        args, error = decode_args(raw)
        if args is not None:
            args = self._arguments(name, args)
        if not name:
            args, error = None, NO_FUNCTION_NAME
        index = self._calls
        self._calls += 1
        # Ollama gives calls no ids; the tool results are matched to calls by these.
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        call_id = call_id or f"call_{secrets.token_hex(12)}"
        events.append(ToolCallStart(index=index, id=call_id, name=name))
        if raw:
            events.append(ToolCallArgsDelta(index, raw))
        events.append(ToolCallEnd(index=index, id=call_id, name=name, raw=raw, args=args, error=error))

    def _arguments(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        # Some models echo the tool's own name as a "functionName" argument (langchain-ollama strips it too);
        # passed on, it would fail the tool's argument validation.
        if args.get("functionName") == name and name not in self._takes_function_name:
            return {key: value for key, value in args.items() if key != "functionName"}
        return args

    def _normalised_reason(self) -> str:
        normalised = _DONE_REASONS.get(self._done_reason or "stop", "other")
        # Ollama says "stop" after calling tools; the calls are what counts.
        if normalised == "stop" and self._calls:
            return "tool_calls"
        return normalised
