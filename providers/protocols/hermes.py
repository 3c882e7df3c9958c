"""Hermes tool calls: `<tool_call>{"name": …, "arguments": {…}}</tool_call>` in the text.

Read incrementally: the call starts (ToolCallStart) as soon as its "name" is read, and the text of its
"arguments" object goes out as ToolCallArgsDelta while it streams, as native calls do. A JSON-aware
scanner keeps `</tool_call>` written inside a string value from ending the call.

Leniency, each from a real model (see shared/vectors): a missing `</tool_call>` at the end of the reply
or before the next `<tool_call>` (GLM-4.7, Nemotron); `</think>` written instead of `</tool_call>`;
spaces or newlines inside the tags; "arguments" double-encoded as a JSON string (Granite); a JSON
array of calls in one block (Seed); raw newlines and unknown escapes such as `\\$` in strings
(Command R+); "parameters" for "arguments" (Llama 3). A block that cannot be read becomes a call that
ends with an error the model is shown, never a crash and never markup in the visible text.

The prompt's other blocks (`<tool_response>`, `<tools>`), which small models copy into their answer, are left
out of the visible text with their contents, and so are their stray closing tags (not in leak mode).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..types import StreamEvent, ToolCallArgsDelta
from . import lenient_json
from .base import THINK_CLOSE, Marker, StreamParser, is_literal_prefix, shorten
from .prompts import HERMES_PROMPT_BLOCKS

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
ARGS_KEYS = ("arguments", "parameters")
HOW_TO = 'Write each call as <tool_call>{"name": "<tool name>", "arguments": {…}}</tool_call>.'
# Outside a JSON string these end the block; the opening tag of the next call is left for it.
_BLOCK_ENDS = (TOOL_CALL_CLOSE, TOOL_CALL_OPEN, THINK_CLOSE)
_STRING_STOP = re.compile(r'["\\]')


@dataclass
class _Block:
    """One `<tool_call>` block being read."""

    body: str = ""
    phase: str = "lead"  # lead (before the JSON) | json | after (JSON complete) | raw (not JSON / text after it)
    kind: str = ""  # "{" or "["
    trailing: bool = False  # text after the complete JSON
    json_end: int = 0
    depth: int = 0
    in_str: bool = False
    esc: bool = False
    # Keys and values of the top-level object, read as they stream.
    expect: str = "key"  # key | colon | value | comma
    str_start: int = 0
    str_role: str = ""  # key | value | "" (a string deeper down)
    key: str | None = None
    value_key: str | None = None
    value_start: int = 0
    value_kind: str = ""  # "" (none open) | str | container | prim
    name: str | None = None
    args_start: int | None = None
    args_end: int | None = None
    args_kind: str = ""
    args_sent: int = 0
    # The call, once started.
    index: int | None = None
    call_id: str = ""
    # Leak mode: everything about the block waits until it is known to be a call.
    pending: list[StreamEvent] = field(default_factory=list)
    next_index_before: int = 0
    calls_ended_before: int = 0


class HermesParser(StreamParser):
    """Incremental parser for Hermes `<tool_call>` blocks (see the module docstring).

    `leak_mode` is for native tool calling, where the model was not asked for this markup but a
    server without its tool parser lets it through: only blocks that read as a call become one;
    anything else is given back as the text it was, and stray closing tags are left alone (the model was never shown
    the prompt's blocks either, so what it writes with their tags is its own).
    """

    def __init__(self, *, leak_mode: bool = False, reasoning_open: bool = False, split_think: bool = True) -> None:
        copied = () if leak_mode else HERMES_PROMPT_BLOCKS
        super().__init__(reasoning_open=reasoning_open, split_think=split_think, copied_blocks=copied)
        self._leak = leak_mode
        self._tags = (TOOL_CALL_OPEN,) if leak_mode else (TOOL_CALL_OPEN, TOOL_CALL_CLOSE)
        self._block: _Block | None = None
        #: Calls found in blocks (leak mode: the leaked calls).
        self.blocks_found = 0

    # --- visible text -------------------------------------------------------------------

    def _find_marker(self, buf: str, start: int) -> Marker | None:
        found: Marker | None = None
        for tag in self._tags:
            at = buf.find(tag, start)
            if at != -1 and (found is None or at < found.start):
                found = Marker("call" if tag == TOOL_CALL_OPEN else "drop", at, at + len(tag))
        return found

    def _could_be_marker(self, tail: str) -> bool:
        return is_literal_prefix(tail, self._tags)

    def _hold_window(self) -> int:
        return max(len(tag) for tag in self._tags)

    def _begin_call(self, marker: Marker, out: list[StreamEvent]) -> None:
        self._block = _Block(next_index_before=self._next_index, calls_ended_before=self.calls_ended)
        self._mode = "call"

    # --- the block ------------------------------------------------------------------------

    def _scan_call(self, out: list[StreamEvent], final: bool) -> bool:
        b = self._block
        assert b is not None
        buf, base = self._buf, len(b.body)
        i, n = 0, len(buf)
        ended_by = None
        while i < n:
            c = buf[i]
            if b.in_str:
                if b.esc:
                    b.esc = False
                    i += 1
                    continue
                stop = _STRING_STOP.search(buf, i)
                if stop is None:
                    i = n
                    break
                i = stop.start()
                if buf[i] == "\\":
                    b.esc = True
                else:
                    b.in_str = False
                    self._string_closed(b, buf, base, i)
                i += 1
                continue
            if c == "<":
                ended_by = next((tag for tag in _BLOCK_ENDS if buf.startswith(tag, i)), None)
                if ended_by or (not final and is_literal_prefix(buf[i:], _BLOCK_ENDS)):
                    break  # a tag that ends the block, or perhaps the start of one: wait for the rest
                if b.phase in ("lead", "after"):
                    b.trailing = b.phase == "after"
                    b.phase = "raw"
                i += 1
                continue
            if b.phase == "raw":
                at = buf.find("<", i)
                i = n if at == -1 else at
            elif c.isspace() and b.phase in ("lead", "after"):
                i += 1
            elif b.phase == "lead" and c in "{[":
                b.phase, b.kind, b.depth = "json", c, 1
                i += 1
            elif b.phase != "json":
                b.trailing = b.phase == "after"
                b.phase = "raw"
            else:
                self._json_char(b, buf, base, i, c)
                i += 1
        b.body += buf[:i]
        self._buf = buf[i:]
        self._stream(b, self._target(b, out))
        if ended_by is not None:
            if ended_by != TOOL_CALL_OPEN:
                self._buf = self._buf[len(ended_by) :]
            self._finish(b, out, closer=ended_by if ended_by != TOOL_CALL_OPEN else "")
            return True
        if final:
            self._finish(b, out, closer="")
            return True
        return False

    def _json_char(self, b: _Block, buf: str, base: int, i: int, c: str) -> None:
        """One character of the JSON body outside any string."""
        pos = base + i
        top = b.kind == "{" and b.depth == 1
        if c == '"':
            b.in_str, b.str_start = True, pos
            b.str_role = ("key" if b.expect == "key" else "value" if b.expect == "value" else "") if top else ""
            if b.str_role == "value":
                self._open_value(b, pos, "str")
        elif c in "{[":
            if top and b.expect == "value":
                self._open_value(b, pos, "container")
            b.depth += 1
        elif c in "}]":
            b.depth -= 1
            if b.depth == 1 and b.value_kind == "container":
                self._close_value(b, buf, base, pos + 1)
            elif b.depth == 0:
                if b.value_kind:
                    self._close_value(b, buf, base, pos)
                b.phase, b.json_end = "after", pos + 1
        elif top:
            if c == ":" and b.expect == "colon":
                b.expect = "value"
            elif c == "," or c.isspace():
                if b.value_kind == "prim":
                    self._close_value(b, buf, base, pos)
                if c == ",":
                    b.expect = "key"
            elif b.expect == "value":
                self._open_value(b, pos, "prim")

    def _string_closed(self, b: _Block, buf: str, base: int, i: int) -> None:
        end = base + i + 1
        if b.str_role == "key":
            key, _ = lenient_json.loads(_slice(b, buf, base, b.str_start, end))
            b.key = key if isinstance(key, str) else None
            b.expect = "colon"
        elif b.str_role == "value" and b.value_kind == "str":
            self._close_value(b, buf, base, end)
        b.str_role = ""

    @staticmethod
    def _open_value(b: _Block, pos: int, kind: str) -> None:
        b.value_key, b.value_start, b.value_kind, b.expect = b.key, pos, kind, "comma"
        if b.key in ARGS_KEYS and b.args_start is None:
            b.args_start, b.args_kind = pos, kind

    @staticmethod
    def _close_value(b: _Block, buf: str, base: int, end: int) -> None:
        if b.value_key == "name" and b.value_kind == "str" and b.name is None:
            name, _ = lenient_json.loads(_slice(b, buf, base, b.value_start, end))
            if isinstance(name, str) and name.strip():
                b.name = name.strip()
        if b.value_start == b.args_start:
            b.args_end = end
        b.value_kind = ""

    def _target(self, b: _Block, out: list[StreamEvent]) -> list[StreamEvent]:
        return b.pending if self._leak else out

    def _stream(self, b: _Block, target: list[StreamEvent]) -> None:
        """Start the call once its name is known; pass on the arguments object as it grows."""
        if b.index is None and b.name is not None:
            b.index, b.call_id = self._start_call(b.name, target)
        if b.index is None or b.args_start is None or b.args_kind != "container":
            return
        start = max(b.args_sent, b.args_start)
        end = b.args_end if b.args_end is not None else len(b.body)
        if end > start:
            target.append(ToolCallArgsDelta(b.index, b.body[start:end]))
            b.args_sent = end

    # --- deciding -------------------------------------------------------------------------

    def _finish(self, b: _Block, out: list[StreamEvent], closer: str) -> None:
        self._block = None
        self._mode = "text"
        target = self._target(b, out)
        calls, error = self._read_block(b, closer)
        written = TOOL_CALL_OPEN + b.body + closer
        if error is not None:
            self._settle(b, b.name or _name_in(b.body), None, error, target, written)
        elif b.kind == "[":
            for name, args, call_error in calls:
                self._whole_call(name, args, call_error, target)
        else:
            name, args, call_error = calls[0]
            self._settle(b, b.name or name, args, call_error, target, written)
        if not self._leak:
            return
        failed = error is not None or any(call_error for _, _, call_error in calls)
        if failed:  # not a call after all: give the text back as it was
            self._next_index, self.calls_ended = b.next_index_before, b.calls_ended_before
            self._emit_text(TOOL_CALL_OPEN + b.body + closer, out)
        else:
            out.extend(b.pending)
            self.blocks_found += 1

    def _settle(
        self, b: _Block, name: str, args: dict | None, error: str | None, out: list[StreamEvent], written: str
    ) -> None:
        """End the block's one call, starting it first if its name never came."""
        if b.index is None:
            b.index, b.call_id = self._start_call(name, out)
        if b.args_kind == "container" and b.args_start is not None:
            raw = b.body[b.args_start : max(b.args_sent, b.args_start)]
        else:
            raw = ""
            if args is not None:
                raw = json.dumps(args, ensure_ascii=False)
                out.append(ToolCallArgsDelta(b.index, raw))
        if args is None and not error:
            error = "The call could not be read."
        self._end_call(b.index, b.call_id, name, out, raw=raw, args=args, error=error, written=written)

    def _read_block(self, b: _Block, closer: str) -> tuple[list[tuple[str, dict | None, str | None]], str | None]:
        """The calls in a finished block, or why it is not one."""
        body = b.body.strip()
        if b.phase == "lead":
            return [], f"The <tool_call> block is empty. {HOW_TO}"
        if b.phase == "json":
            where = f"before {closer}" if closer else "when the reply ended"
            return [], f"The tool call's JSON is incomplete {where}: {shorten(body)!r}. {HOW_TO}"
        if b.trailing:
            extra = shorten(b.body[b.json_end :])
            return [], f"Only the JSON object may stand inside <tool_call>, but text follows it: {extra!r}. {HOW_TO}"
        if b.phase == "raw":
            return [], f"The text inside <tool_call> is not a JSON object: {shorten(body)!r}. {HOW_TO}"
        value, problem = lenient_json.loads(b.body[: b.json_end].strip())
        if problem is not None:
            return [], f"The tool call is not valid JSON ({problem}): {shorten(body)!r}. {HOW_TO}"
        if b.kind == "[":
            if not isinstance(value, list) or not value:
                return [], f"The list inside <tool_call> holds no calls. {HOW_TO}"
            return [decode_call(item) for item in value], None
        return [decode_call(value)], None


def decode_call(obj: Any) -> tuple[str, dict | None, str | None]:
    """(name, arguments, None) from {"name": …, "arguments": …}, or (name, None, why not)."""
    if not isinstance(obj, dict):
        return (
            "",
            None,
            f"A tool call must be a JSON object with name and arguments, not {shorten(json.dumps(obj))}. {HOW_TO}",
        )
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return "", None, f'The tool call has no "name". {HOW_TO}'
    name = name.strip()
    args = next((obj[key] for key in ARGS_KEYS if key in obj), None)
    if args is None:
        return name, {}, None
    if isinstance(args, str):
        if not args.strip():
            return name, {}, None
        decoded, problem = lenient_json.loads(args)
        if problem is not None or not isinstance(decoded, dict):
            return name, None, f'"arguments" must be a JSON object, not the string {shorten(args)!r}. {HOW_TO}'
        args = decoded
    if not isinstance(args, dict):
        kind = type(args).__name__
        return name, None, f'"arguments" must be a JSON object, not a {kind}: {shorten(json.dumps(args))}. {HOW_TO}'
    return name, args, None


_NAME_IN_TEXT = re.compile(r'"name"\s*:\s*"([^"\\]{1,200})"')


def _name_in(body: str) -> str:
    """The tool name in a block that is not valid JSON, so the error can name the tool."""
    match = _NAME_IN_TEXT.search(body)
    return match.group(1).strip() if match else ""


def _slice(b: _Block, buf: str, base: int, start: int, end: int) -> str:
    """Text of the block between body offsets start and end, reaching into the batch being scanned."""
    if start >= base:
        return buf[start - base : end - base]
    return b.body[start:] + buf[: end - base]


__all__ = ["TOOL_CALL_CLOSE", "TOOL_CALL_OPEN", "HermesParser", "decode_call"]
