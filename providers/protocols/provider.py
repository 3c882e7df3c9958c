"""Providers that wrap another provider's text stream.

- TextProtocolProvider: tool calling for models without it. The tools go into the system prompt in a
  text protocol (hermes or xml), the model answers in plain text, and the calls are parsed back out of
  that text into the same events a native provider yields.
- NativeLeakGuardProvider: native tool calling, with a net under it. A server started without its tool
  parser passes the model's `<tool_call>{…}</tool_call>` through as content; a complete block that reads
  as a call is handled as one, and a note says so. `<think>` reasoning in the content is separated too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable

from ..base import Provider
from ..structured import AnswerFormat, final_answer_as_text, with_final_answer
from ..types import (
    ChatMessage,
    Finish,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
)
from .base import StreamParser
from .hermes import HermesParser
from .prompts import PROTOCOLS, render_messages
from .think import ThinkParser
from .xml import XmlParser

LEAK_NOTE = (
    "The model wrote {count} tool call(s) as <tool_call> text instead of using the server's tool calling; "
    "agentweb ran them as calls. The model server is probably running without its tool-call parser "
    "(vLLM: --enable-auto-tool-choice --tool-call-parser hermes; llama.cpp: --jinja), or set "
    "AGENTWEB_LLM_TOOL_PROTOCOL=hermes."
)
_CALL_EVENTS = (ToolCallStart, ToolCallArgsDelta, ToolCallEnd)


def make_parser(
    protocol: str, tools: list[ToolDefinition], *, reasoning_open: bool = False, split_think: bool = True
) -> StreamParser:
    if protocol == "hermes":
        return HermesParser(reasoning_open=reasoning_open, split_think=split_think)
    if protocol == "xml":
        return XmlParser(tools, reasoning_open=reasoning_open, split_think=split_think)
    raise ValueError(f"Unknown tool protocol {protocol!r}; use one of: {', '.join(PROTOCOLS)}.")


class TextProtocolProvider:
    """`inner` is asked for plain text with the tools described in the prompt (see the module docstring).

    `reasoning_open`: the model's chat template opens `<think>` itself (DeepSeek-R1, QwQ), so its reply
    starts inside reasoning and only `</think>` appears.
    """

    def __init__(self, inner: Provider, protocol: str, *, reasoning_open: bool = False) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"Unknown tool protocol {protocol!r}; use one of: {', '.join(PROTOCOLS)}.")
        self.inner = inner
        self.protocol = protocol
        self.reasoning_open = reasoning_open

    @property
    def label(self) -> str:
        return self.inner.label

    @property
    def is_demo(self) -> bool:
        return self.inner.is_demo

    def __repr__(self) -> str:
        return f"TextProtocolProvider({self.inner!r}, {self.protocol!r})"

    async def stream(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: AnswerFormat | None = None
    ) -> AsyncIterator[StreamEvent]:
        """`answer`: the final_answer tool is described with the others (alone on the step that must answer), and
        its call comes back as the step's text (providers/structured.py)."""
        tools = with_final_answer(tools, answer)
        parser = make_parser(self.protocol, tools, reasoning_open=self.reasoning_open)
        events = parse_text_stream(self.inner.stream(render_messages(self.protocol, messages, tools), []), parser)
        if answer is not None:
            events = final_answer_as_text(events, answer.schema)
        async for event in events:
            yield event


class NativeLeakGuardProvider:
    """Native tool calling through `inner`, catching calls that leak into the content as Hermes text.

    After a step, `take_notes()` returns (and forgets) what the run should tell the person, e.g. that
    the model server runs without its tool parser. Text without a `<tool_call>` block streams through
    as it comes, apart from a trailing fragment that could be the start of `<tool_call>` or `<think>`.
    """

    def __init__(self, inner: Provider, *, reasoning_open: bool = False, split_think: bool = True) -> None:
        self.inner = inner
        self.reasoning_open = reasoning_open
        self.split_think = split_think
        self.notes: list[str] = []

    @property
    def label(self) -> str:
        return self.inner.label

    @property
    def is_demo(self) -> bool:
        return self.inner.is_demo

    def __repr__(self) -> str:
        return f"NativeLeakGuardProvider({self.inner!r})"

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    def stream(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: AnswerFormat | None = None
    ) -> AsyncIterator[StreamEvent]:
        # Not a generator of its own: the parsing generator is handed out directly, one layer fewer per event.
        if answer is not None:  # a final_answer call that leaked into the text is the answer too
            return final_answer_as_text(self._guarded(messages, tools, {"answer": answer}), answer.schema)
        return self._guarded(messages, tools, {})

    def _guarded(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], extra: dict
    ) -> AsyncIterator[StreamEvent]:
        parser: StreamParser
        if tools:
            parser = HermesParser(leak_mode=True, reasoning_open=self.reasoning_open, split_think=self.split_think)
        elif self.split_think:
            parser = ThinkParser(reasoning_open=self.reasoning_open)
        else:
            return self.inner.stream(messages, tools, **extra)

        def note_leaks() -> None:
            leaked = getattr(parser, "blocks_found", 0)
            if leaked:
                self.notes.append(LEAK_NOTE.format(count=leaked))

        return parse_text_stream(self.inner.stream(messages, tools, **extra), parser, on_end=note_leaks)


async def parse_text_stream(
    events: AsyncIterator[StreamEvent], parser: StreamParser, *, on_end: Callable[[], None] | None = None
) -> AsyncIterator[StreamEvent]:
    """`events` with their text run through `parser`; every other event passes on in order.

    Calls from the parser and native calls from `events` (a guarded native stream has both) are numbered
    together, in the order they start. Before Finish the parser is closed, so every call it started has
    ended; a "stop" after calls becomes "tool_calls", as native providers report it. `on_end` is called
    when the stream ends, however it ends.
    """
    numbers = _Numbering()
    finished = False
    try:
        async for event in events:
            if isinstance(event, TextDelta):
                for parsed in parser.feed(event.text):
                    yield parsed if type(parsed) is TextDelta else numbers.apply("text", parsed)
            elif isinstance(event, _CALL_EVENTS):
                yield numbers.apply("native", event)
            elif isinstance(event, Finish):
                for parsed in parser.close():
                    yield numbers.apply("text", parsed)
                reason = event.reason
                if reason == "stop" and parser.calls_ended:
                    reason = "tool_calls"
                finished = True
                yield Finish(reason)
            else:
                yield event
        if not finished:
            for parsed in parser.close():
                yield numbers.apply("text", parsed)
    finally:
        if on_end is not None:
            on_end()


class _Numbering:
    """One sequence of call indexes for calls from two sources."""

    def __init__(self) -> None:
        self._indexes: dict[tuple[str, int], int] = {}

    def apply(self, source: str, event: StreamEvent) -> StreamEvent:
        if not isinstance(event, _CALL_EVENTS):
            return event
        key = (source, event.index)
        if key not in self._indexes:
            self._indexes[key] = len(self._indexes)
        index = self._indexes[key]
        return event if index == event.index else dataclasses.replace(event, index=index)
