"""Provider for any server that speaks the OpenAI chat-completions wire format.

OpenAI itself, Azure OpenAI, vLLM, llama.cpp, Ollama's /v1, LM Studio, OpenRouter … each bends the
format a little; the chunk reader below is written to the loosest of them (see the conformance vectors
in shared/vectors/openai_chat_completions_sse.json).
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from json.decoder import scanstring as _scanstring
from typing import Any

import httpx

from .context import ADVICE, context_filled_message
from .http_provider import DEFAULT_TOTAL_TIMEOUT, HTTPProvider, ModelServerError, get_http_client
from .sse import SSEDecoder, SSEEvent
from .stream import NO_FUNCTION_NAME, OUT_OF_TOKENS, WireReader, decode_args, read_stream
from .structured import AnswerFormat, with_final_answer
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

log = logging.getLogger("agentweb.llm")

#: The endpoints (chat-completions URLs, without credentials) that refused `stream_options: {"include_usage": true}`
#: with an error naming it: asked without it from then on. In this process only: a restart asks once more.
USAGE_OPTION_REFUSED: set[str] = set()
#: The endpoints that refused `response_format: json_schema` (a 400/422 naming it): a structured answer is asked of
#: them with the final_answer tool from then on (providers/structured.py). In this process only.
RESPONSE_FORMAT_REFUSED: set[str] = set()

#: The most of a /props answer that is read (llama-server's is a few KiB, its chat template included).
PROPS_MAX_BYTES = 256 * 1024
#: Seconds to wait for llama-server's /props, asked only when an answer stopped short of its output limit.
PROPS_TIMEOUT = 5.0
_FINISH_REASONS = {
    "stop": "stop",
    "eos": "stop",  # text-generation-inference and some llama.cpp builds
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",  # the legacy functions API
    "length": "length",
    "content_filter": "content_filter",
}


class OpenAIProvider(HTTPProvider):
    path = "/chat/completions"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        top_p: float | None = None,
        client: httpx.AsyncClient | None = None,
        transport: str = "streaming",
        timeout: float | None = DEFAULT_TOTAL_TIMEOUT,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
        length_means_full_context: bool = False,
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
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_p = top_p
        #: No output limit is sent (neither here nor in the server's own settings): an answer that stops for
        #: "length" has filled the model's context, and that is an error the person can act on, not a cut.
        self.length_means_full_context = length_means_full_context and max_tokens is None

    def request_headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def answers_with_tool(self, answer: AnswerFormat) -> bool:
        return self._url in RESPONSE_FORMAT_REFUSED

    def request_body(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: AnswerFormat | None = None
    ) -> dict[str, Any]:
        """`answer`: `response_format: json_schema` (tool calls stay free; on the step that must answer,
        `tool_choice: "none"`), or the final_answer tool where the server refused it."""
        if answer is not None and self.answers_with_tool(answer):
            tools, answer = with_final_answer(tools, answer), None
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [message_to_wire(m) for m in with_readable_calls(messages)],
            "stream": True,
        }
        if self._url not in USAGE_OPTION_REFUSED:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
        if answer is not None:
            json_schema = {"name": answer.name, "schema": answer.schema, "strict": answer.strict}
            body["response_format"] = {"type": "json_schema", "json_schema": json_schema}
            self._asked_format = True
            if tools and answer.force:
                body["tool_choice"] = "none"
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def ask_again_without(self, error: ModelServerError) -> bool:
        """A server that refuses `response_format` (a 400/422 naming it, or json_schema) is remembered, and asked
        again with the final_answer tool. An older server (vLLM before 0.5, some proxies) refuses `stream_options`
        with a 400 or 422 that names it: it is remembered for this endpoint (in this process) and never sent to it
        again; the usage is estimated."""
        refused = error.status in (400, 422) and _names_response_format(error)
        if refused and getattr(self, "_asked_format", False) and self._url not in RESPONSE_FORMAT_REFUSED:
            RESPONSE_FORMAT_REFUSED.add(self._url)
            log.warning("%s refuses response_format: structured answers use the final_answer tool", self.base_url)
            return True
        if self._url in USAGE_OPTION_REFUSED or error.status not in (400, 422) or "stream_options" not in str(error):
            return False
        USAGE_OPTION_REFUSED.add(self._url)
        log.warning("%s refuses stream_options: its usage is estimated from now on", self.base_url)
        return True

    def read_events(self, chunks: AsyncIterator[bytes], tools: list[ToolDefinition]) -> AsyncIterator[StreamEvent]:
        return read_stream(ChunkReader(self), chunks)

    async def stopped_at_the_context(self, counted: Usage) -> bool:
        """Whether an answer that stopped for "length" under an output limit it never reached was stopped by the end
        of the model's context: the server counted the tokens, and its context's size (llama-server's `/props`)
        is what the conversation and the answer took. A server that does not say its size (or caps answers itself
        below the limit) leaves it an answer cut at its output limit: nothing is guessed."""
        prompt, answer = counted.input_tokens, counted.output_tokens
        if self.max_tokens is None or prompt is None or answer is None or answer >= self.max_tokens:
            return False
        size = await self.context_size()
        return size is not None and prompt + answer >= size

    async def context_size(self) -> int | None:
        """The context of the server's slot in tokens, from llama-server's `GET /props` (beside /v1, on the same
        origin and with the same credentials as the answers), or None when the server does not say it."""
        root = self.base_url.rstrip("/").removesuffix("/v1")
        client = self._client or get_http_client()
        headers = {key: value for key, value in self.request_headers().items() if key != "Accept"}
        try:
            props = await self._read_props(client, f"{root}/props", headers)
        except (httpx.HTTPError, ValueError):
            return None
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        size = settings.get("n_ctx") if isinstance(settings, dict) else None
        return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None

    async def _read_props(self, client, url: str, headers: dict[str, str]) -> Any:
        """The server's /props as JSON, or None; a body over PROPS_MAX_BYTES is not read further (llama-server's is a
        few KiB: what a server says there is untrusted, and read before anything else is done with it)."""
        async with client.stream("GET", url, headers=headers, auth=self._auth, timeout=PROPS_TIMEOUT) as response:
            if response.status_code != 200:
                return None
            body = bytearray()
            async for piece in response.aiter_bytes():
                body += piece
                if len(body) > PROPS_MAX_BYTES:
                    return None
        return json.loads(body)


def _names_response_format(error: ModelServerError) -> bool:
    text = str(error)
    return "response_format" in text or "json_schema" in text


class ChunkReader(WireReader):
    """The chat-completions stream: server-sent events, each a chat.completion.chunk object, then `[DONE]`."""

    # Either end marker says the answer is whole: some servers never send [DONE] (a finish_reason is their last
    # word), a few never set finish_reason (then [DONE] is).
    end_marker = "a finish_reason or [DONE]"

    def __init__(self, provider: OpenAIProvider) -> None:
        super().__init__(provider)
        self.provider: OpenAIProvider = provider
        self.assembler = ChunkAssembler()
        self.plain = PlainTextChunks()

    def frames(self) -> SSEDecoder:
        return SSEDecoder()

    def text(self, sse: SSEEvent) -> str | None:  # the fast path: the same chunk as the last plain text one
        return self.plain.text(sse.data)

    def feed(self, sse: SSEEvent) -> list[StreamEvent] | tuple[()]:
        if sse.data == "[DONE]":
            self.ended = True
            return ()
        chunk = self.json_object(sse.data)
        if chunk.get("error") or chunk.get("object") == "error":  # vLLM reports errors as {"object": "error", ...}
            raise self.reported_error(chunk, sse.data)
        self.plain.learn(sse.data, chunk)
        return self.assembler.feed(chunk)

    @property
    def complete(self) -> bool:
        return self.ended or self.assembler.finished

    def finish(self) -> list[StreamEvent]:
        return self.assembler.finish()

    async def check_finish(self, finish: Finish, usage: Usage) -> None:
        if finish.reason != "length":
            return
        provider = self.provider
        if provider.length_means_full_context:
            raise self.error(context_filled_message(usage.input_tokens, usage.output_tokens, None))
        if await provider.stopped_at_the_context(usage):
            raise self.error(context_filled_message(usage.input_tokens, usage.output_tokens, provider.max_tokens))

    def nothing_sent(self) -> ModelServerError:
        # What some servers answer to a prompt larger than their context, instead of an error.
        return self.error(
            f"The model server at {self.provider.base_url} ended the response without sending anything: this"
            f" conversation probably no longer fits the model's context. {ADVICE}"
        )


class PlainTextChunks:
    """Recognises a chunk that only carries text and is the same as the last such chunk but for its text.

    A model server sends thousands of chunks that differ only in their `"content"` string, e.g.
    `{"id":"chatcmpl-1",…,"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`. Once one
    is parsed in full and found to carry nothing but text for choice 0 (no usage, finish reason, reasoning,
    refusal, tool calls or error), its text before and after the content string is remembered; a later chunk
    with exactly that text around a valid JSON string is the same object with another content, so only the
    string is decoded. Anything else (or any doubt) goes the full way: `text` returns None.
    """

    #: Chunks learned from at most: a server whose chunks all differ (a random field) costs little extra.
    LEARN_LIMIT = 8
    #: The rest of a JSON string literal (its text and closing quote) and the text it stands for.
    _PROBE_JSON = '\\u0001agentweb-probe\\u0002"'
    _PROBE_TEXT = "\x01agentweb-probe\x02"

    def __init__(self) -> None:
        self._prefix: str | None = None  # up to and including the content string's opening quote
        self._suffix = ""  # from just after its closing quote to the end
        self._learns = 0

    def text(self, data: str) -> str | None:
        prefix = self._prefix
        if prefix is None or not data.startswith(prefix) or not data.endswith(self._suffix):
            return None
        try:
            value, end = _scanstring(data, len(prefix), True)
        except ValueError:
            return None
        return value if end == len(data) - len(self._suffix) else None

    def learn(self, data: str, chunk: dict[str, Any]) -> None:
        if self._learns >= self.LEARN_LIMIT or plain_text(chunk) is None:
            return
        self._learns += 1
        self._prefix = None
        at = data.find('"content":')
        while at != -1:
            start = data.find('"', at + len('"content":'))
            if start != -1 and data[at + len('"content":') : start].strip() == "":
                try:
                    _, end = _scanstring(data, start + 1, True)
                except ValueError:
                    return
                prefix, suffix = data[: start + 1], data[end:]
                # The string at this spot must be the one read as the content (not a look-alike in another
                # field, nor a key repeated later): a probe written there has to come out as the content.
                try:
                    probe = json.loads(prefix + self._PROBE_JSON + suffix)
                except ValueError:
                    return
                if plain_text(probe) == self._PROBE_TEXT:
                    self._prefix, self._suffix = prefix, suffix
                    return
            at = data.find('"content":', at + 1)


def plain_text(chunk: Any) -> str | None:
    """The text of a chunk that carries text for choice 0 and nothing else `ChunkAssembler` would act on."""
    if not isinstance(chunk, dict) or chunk.get("error") or chunk.get("object") == "error":
        return None
    if isinstance(chunk.get("usage"), dict):
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict or choice.get("index", 0) != 0 or choice.get("finish_reason"):
        return None
    delta = choice.get("delta")
    if type(delta) is not dict:
        return None
    for key in ("reasoning_content", "reasoning", "refusal", "tool_calls"):
        if delta.get(key):
            return None
    content = delta.get("content")
    return content if type(content) is str else None


def message_to_wire(message: ChatMessage) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "user" and message.images:
        # Content parts: the text, then each image as a data URL (OpenAI's vision format, which vLLM, llama.cpp's
        # server, LM Studio and OpenRouter read too).
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
        parts += [
            {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{image.data}"}}
            for image in message.images
        ]
        return {"role": "user", "content": parts}
    if message.role != "assistant" or not message.tool_calls:
        return {"role": message.role, "content": message.content}
    return {
        "role": "assistant",
        # A string, never null: OpenAI takes both for a turn that only calls tools, llama-cpp-python's server
        # rejects null with a 500 ("Input should be a valid string").
        "content": message.content,
        "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": json.dumps(call.args)}}
            for call in message.tool_calls
        ],
    }


@dataclass
class _PendingCall:
    id: str | None = None
    name: str | None = None
    started: bool = False
    parts: list[str] = field(default_factory=list)


class ChunkAssembler:
    """Turns decoded chat.completion.chunk objects into neutral stream events, one chunk at a time."""

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self._last_index: int | None = None
        self._finish_reason: str | None = None
        self._usage: Usage | None = None

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            # Last one wins: some servers repeat a growing usage object on every chunk.
            self._usage = Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"))
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue  # only one completion is asked for; never mix in another
            reason = choice.get("finish_reason")
            if reason:
                self._finish_reason = reason
            delta = choice.get("delta")
            if delta:  # Azure's content-filter trailer is a choice without a delta
                self._delta(delta, events)
        return events

    @property
    def finished(self) -> bool:
        """A finish_reason has come: the model said its answer is complete."""
        return self._finish_reason is not None

    def finish(self) -> list[StreamEvent]:
        """The stream ended: close every tool call, then usage, then the finish reason."""
        events: list[StreamEvent] = []
        reason = self._normalised_reason()
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call.started:
                self._start(index, call, events)
            raw = "".join(call.parts)
            args, error = decode_args(raw)
            if error and reason == "length":
                error = OUT_OF_TOKENS  # cut off mid-call, not a model that writes broken JSON
            if not call.name:
                args, error = None, NO_FUNCTION_NAME
            events.append(ToolCallEnd(index=index, id=call.id, name=call.name, raw=raw, args=args, error=error))
        if self._usage is not None:
            events.append(self._usage)
        events.append(Finish(reason))
        return events

    def _delta(self, delta: dict[str, Any], events: list[StreamEvent]) -> None:
        # Reasoning first: within one chunk it precedes the answer it led to.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning and isinstance(reasoning, str):
            events.append(ReasoningDelta(reasoning))
        content = delta.get("content")
        if content and isinstance(content, str):
            events.append(TextDelta(content))
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            events.append(TextDelta(refusal))  # shown as text: otherwise the person would see an empty answer
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            for fragment in tool_calls:
                self._tool_fragment(fragment, events)

    def _tool_fragment(self, fragment: dict[str, Any], events: list[StreamEvent]) -> None:
        index = self._fragment_index(fragment)
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _PendingCall()
        self._last_index = index
        function = fragment.get("function") or {}
        if not call.started:
            call.id = call.id or fragment.get("id")
            call.name = call.name or function.get("name")
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments)  # a few servers send the object itself instead of its JSON text
        if arguments:
            call.parts.append(arguments)
        if call.started:
            if arguments:
                events.append(ToolCallArgsDelta(index, arguments))
        elif call.name:
            # Start once the name is known; arguments that came before it go out as one delta.
            self._start(index, call, events)
            if call.parts:
                events.append(ToolCallArgsDelta(index, "".join(call.parts)))

    def _fragment_index(self, fragment: dict[str, Any]) -> int:
        index = fragment.get("index")
        if isinstance(index, int):
            return index
        # Some servers (Gemini's compatibility API among them) leave out the index: a fragment with a new
        # id opens the next call, anything else continues the last one.
        last = self._calls.get(self._last_index) if self._last_index is not None else None
        new_id = fragment.get("id")
        if last is None:
            return 0
        if new_id and last.id and new_id != last.id:
            return max(self._calls) + 1
        return self._last_index

    @staticmethod
    def _start(index: int, call: _PendingCall, events: list[StreamEvent]) -> None:
        call.id = call.id or f"call_{secrets.token_hex(12)}"
        call.name = call.name or ""
        call.started = True
        events.append(ToolCallStart(index=index, id=call.id, name=call.name))

    def _normalised_reason(self) -> str:
        reason = self._finish_reason
        if reason is None:
            return "tool_calls" if self._calls else "stop"
        normalised = _FINISH_REASONS.get(reason, "other")
        # Some servers (older Ollama among them) say "stop" after calling tools; the calls are what counts.
        if normalised == "stop" and self._calls:
            return "tool_calls"
        return normalised


_decode_args = decode_args  # the earlier private name
