"""Feeding parsers and reading what came out, for the text-protocol tests."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from providers.protocols.base import StreamParser
from providers.types import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)

CALL_ID = re.compile(r"call_[0-9a-f]{24}")


@dataclass
class Outcome:
    """What a stream amounted to, without the generated ids (which differ run to run)."""

    text: str = ""
    reasoning: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)  # (name, args) of calls that can run
    errors: list[tuple[str, str]] = field(default_factory=list)  # (name, error) of calls that cannot
    raws: list[str] = field(default_factory=list)  # End.raw of every call, in order
    text_parts: list[str] = field(default_factory=list)  # visible text between calls, empty parts left out

    def key(self) -> tuple:
        return (self.text, self.reasoning, self.calls, self.errors, self.raws, self.text_parts)


def feed(parser: StreamParser, chunks: list[str]) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.close()


def random_chunks(text: str, seed: Any, max_size: int = 10) -> list[str]:
    rng = random.Random(seed)
    chunks, start = [], 0
    while start < len(text):
        end = start + rng.randint(1, max_size)
        chunks.append(text[start:end])
        start = end
    return chunks


def chunkings(text: str, seeds: tuple[int, ...] = (1, 2, 3)) -> dict[str, list[str]]:
    """The same text whole, one character at a time and in random pieces."""
    ways = {"whole": [text], "by character": list(text)}
    for seed in seeds:
        ways[f"random pieces (seed {seed})"] = random_chunks(text, seed)
    return ways


def outcome(events: list[StreamEvent], *, generated_ids: bool = True) -> Outcome:
    """Read the events, checking on the way that calls are shaped as native providers shape them."""
    check_call_events(events, generated_ids=generated_ids)
    result = Outcome()
    parts = [""]
    for event in events:
        if isinstance(event, TextDelta):
            assert event.text, "an empty TextDelta"
            result.text += event.text
            parts[-1] += event.text
        elif isinstance(event, ReasoningDelta):
            assert event.text, "an empty ReasoningDelta"
            result.reasoning += event.text
        elif isinstance(event, ToolCallStart):
            parts.append("")
        elif isinstance(event, ToolCallEnd):
            result.raws.append(event.raw)
            if event.args is None:
                assert event.error, "a call without arguments must say why"
                result.errors.append((event.name, event.error))
            else:
                assert event.error is None
                result.calls.append((event.name, event.args))
    result.text_parts = [part for part in parts if part]
    return result


def check_call_events(events: list[StreamEvent], *, generated_ids: bool = True) -> None:
    """Every call: Start (index in order, an id like call_<hex> unless the server gave one), deltas, then
    one End with the same id and name whose raw text is the deltas joined."""
    open_calls: dict[int, tuple[str, str, list[str]]] = {}
    next_index = 0
    for event in events:
        if isinstance(event, ToolCallStart):
            assert event.index == next_index, f"call index {event.index}, expected {next_index}"
            assert CALL_ID.fullmatch(event.id) if generated_ids else event.id, event.id
            open_calls[event.index] = (event.id, event.name, [])
            next_index += 1
        elif isinstance(event, ToolCallArgsDelta):
            assert event.index in open_calls, "arguments for a call that is not open"
            open_calls[event.index][2].append(event.text)
        elif isinstance(event, ToolCallEnd):
            call_id, name, deltas = open_calls.pop(event.index)
            assert (event.id, event.name) == (call_id, name)
            assert event.raw == "".join(deltas)
    assert not open_calls, "calls started but never ended"
