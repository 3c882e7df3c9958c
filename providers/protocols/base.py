"""The scanner every text protocol shares: visible text, `<think>` reasoning, and tool-call blocks.

A parser is fed a model's text as it streams (`feed`) and told when it ends (`close`); it returns the
same neutral events a native provider yields. Text is passed on as soon as it cannot be the start of
markup: only a trailing fragment that could still become a tag (`<`, `<tool_c`, `</thi`) is held back
until the next piece shows what it is. Subclasses say which tags open a tool call and read the call
itself; this class handles the text around calls and the reasoning.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..types import ReasoningDelta, StreamEvent, TextDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
THINK_TAGS = (THINK_OPEN, THINK_CLOSE)
#: How much of the shown text a parser remembers, and what in it could be the start of a tag.
_TAIL = 16
_PARTIAL_TAG = re.compile(r"</?[A-Za-z_]*$")


def new_call_id() -> str:
    """An id in the shape OpenAI uses, for calls that arrive as text and so have none."""
    return f"call_{secrets.token_hex(12)}"


def shorten(text: str, limit: int = 200) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass
class Marker:
    """A tag found in visible text: what it is and where it ends."""

    kind: str  # "think_open" | "think_close" | "drop" | "call" | "skip"
    start: int
    end: int
    name: str = ""  # the tool name of an xml call opener; for "skip", the closing tag that ends what is skipped


class StreamParser:
    """Base of every text-stream parser. See the module docstring.

    `reasoning_open`: the stream starts inside reasoning (models whose chat template already wrote
    `<think>` into the prompt, such as DeepSeek-R1 and QwQ, only ever send `</think>`).
    `split_think`: separate `<think>…</think>` as ReasoningDelta (on by default).
    `copied_blocks`: names of the blocks of the protocol's own prompt (`tool_response`, `tools`, …). A small model
    copies them into its answer; each is left out of the visible text with its contents, and so is a stray closing
    tag of one. A tool call the subclass finds at the same place wins (a tool may be named like a block).
    """

    def __init__(
        self, *, reasoning_open: bool = False, split_think: bool = True, copied_blocks: Iterable[str] = ()
    ) -> None:
        self._buf = ""
        self._mode = "think" if reasoning_open and split_think else "text"
        self._split_think = split_think
        self._closed = False
        self._next_index = 0
        # Whitespace right after <think> or </think> is layout, not content.
        self._strip_reasoning = self._mode == "think"
        self._strip_text = False
        self._shown_tail = ""  # the end of the text shown so far (see _scan_text)
        self._skip_until = ""  # in "skip" mode: the closing tag that ends the block being left out
        self._copied = {f"<{name}>": f"</{name}>" for name in copied_blocks}
        self._copied_tags = (*self._copied, *self._copied.values())
        #: How many tool calls were closed (successful or not); a Finish after them means "tool_calls".
        self.calls_ended = 0

    # --- public interface -----------------------------------------------------------------

    def feed(self, text: str) -> list[StreamEvent]:
        if self._closed:
            raise RuntimeError("feed() after close()")
        if not text:
            return []
        if self._mode == "text" and not self._buf and "<" not in text:
            # Fast path, nearly every piece of a stream: every tag starts with "<" and nothing is held back,
            # so all of it is visible text (what _scan_text would find after looking for each tag).
            out: list[StreamEvent] = []
            self._emit_text(text, out)
            return out
        self._buf += text
        return self._run(final=False)

    def close(self) -> list[StreamEvent]:
        """The stream ended: release held-back text and settle an unfinished call."""
        if self._closed:
            return []
        events = self._run(final=True)
        self._closed = True
        return events

    # --- what subclasses provide ------------------------------------------------------------

    def _find_marker(self, buf: str, start: int) -> Marker | None:
        """The first protocol tag in buf[start:] (call openers, stray closers to drop), or None."""
        return None

    def _could_be_marker(self, tail: str) -> bool:
        """Whether `tail` (which starts with "<") could still grow into one of the protocol's tags."""
        return False

    def _hold_window(self) -> int:
        """The longest protocol tag prefix worth holding back."""
        return 0

    def _begin_call(self, marker: Marker, out: list[StreamEvent]) -> None:
        """A call opener was consumed; set up the call and switch to "call" mode."""
        raise NotImplementedError

    def _scan_call(self, out: list[StreamEvent], final: bool) -> bool:
        """Read the call from self._buf. Return whether anything was consumed or decided."""
        raise NotImplementedError

    # --- the loop ------------------------------------------------------------------------------

    def _run(self, final: bool) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        while self._buf or final:
            if self._mode == "text":
                progressed = self._scan_text(out, final)
            elif self._mode == "think":
                progressed = self._scan_think(out, final)
            elif self._mode == "skip":
                progressed = self._scan_skip(final)
            else:
                progressed = self._scan_call(out, final)
            if not progressed:
                break
        return out

    def _scan_text(self, out: list[StreamEvent], final: bool) -> bool:
        buf = self._buf
        marker = self._earliest_marker(buf)
        if marker is None:
            cut = len(buf) if final else self._hold_point(buf)
            self._emit_text(buf[:cut], out)
            self._buf = buf[cut:]
            return False
        self._emit_text(buf[: marker.start], out)
        self._buf = buf[marker.end :]
        if marker.kind == "think_open":
            self._mode = "think"
            self._strip_reasoning = True
        elif marker.kind == "call":
            self._strip_text = False  # only the layout right after </think> is dropped
            self._begin_call(marker, out)
        elif marker.kind == "skip":
            self._mode, self._skip_until = "skip", marker.name
        # Otherwise a stray closing tag, not shown. A stray </think> means the stream began inside
        # reasoning nobody announced (see reasoning_open): what came before was shown as text already.
        elif _PARTIAL_TAG.search(self._shown_tail):
            # What was shown ends like the start of a tag ("<tool_c"): with the closer simply left out, the text that
            # follows ("all>") would complete it into a tag the model never wrote. A space keeps them apart.
            self._emit_text(" ", out)
        return True

    def _scan_skip(self, final: bool) -> bool:
        """Leave out a block of the protocol's own markup the model copied into its answer (a `<tool_response>`),
        up to and with its closing tag, or to the end of the reply when it never closes."""
        buf = self._buf
        close = buf.find(self._skip_until)
        if close == -1:
            keep = 0 if final else len(buf) - hold_point(buf, len(self._skip_until), self._could_close_skip)
            self._buf = buf[len(buf) - keep :]
            return False
        self._buf = buf[close + len(self._skip_until) :]
        self._mode = "text"
        # The layout around the block goes with it: no blank lines at the start, no doubled ones in the middle.
        self._strip_text = not self._shown_tail or self._shown_tail[-1].isspace()
        return True

    def _could_close_skip(self, tail: str) -> bool:
        return is_literal_prefix(tail, (self._skip_until,))

    def _scan_think(self, out: list[StreamEvent], final: bool) -> bool:
        buf = self._buf
        close = buf.find(THINK_CLOSE)
        opened = buf.find(THINK_OPEN)
        if opened != -1 and (close == -1 or opened < close):
            # <think> inside reasoning (the template opened it and the model did too): drop the tag.
            self._emit_reasoning(buf[:opened], out)
            self._buf = buf[opened + len(THINK_OPEN) :]
            return True
        if close == -1:
            cut = len(buf) if final else hold_point(buf, len(THINK_CLOSE), _could_be_think_tag)
            self._emit_reasoning(buf[:cut], out)
            self._buf = buf[cut:]
            return False
        self._emit_reasoning(buf[:close], out)
        self._buf = buf[close + len(THINK_CLOSE) :]
        self._mode = "text"
        self._strip_text = True
        return True

    def _earliest_marker(self, buf: str) -> Marker | None:
        found = self._find_marker(buf, 0)
        for tag in self._copied_tags:
            at = buf.find(tag)
            if at != -1 and (found is None or at < found.start):
                closer = self._copied.get(tag)
                found = Marker("skip" if closer else "drop", at, at + len(tag), closer or "")
        if self._split_think:
            for kind, tag in (("think_open", THINK_OPEN), ("think_close", THINK_CLOSE)):
                at = buf.find(tag)
                if at != -1 and (found is None or at < found.start):
                    found = Marker(kind, at, at + len(tag))
        return found

    def _hold_point(self, buf: str) -> int:
        window = max(
            self._hold_window(),
            len(THINK_CLOSE) if self._split_think else 0,
            max((len(tag) for tag in self._copied_tags), default=0),
        )
        return hold_point(buf, window, self._could_be_tag)

    def _could_be_tag(self, tail: str) -> bool:
        return (
            self._could_be_marker(tail)
            or is_literal_prefix(tail, self._copied_tags)
            or (self._split_think and _could_be_think_tag(tail))
        )

    # --- emitting ------------------------------------------------------------------------------

    def _emit_text(self, text: str, out: list[StreamEvent]) -> None:
        if self._strip_text:
            text = text.lstrip()
            if not text:
                return
            self._strip_text = False
        if text:
            out.append(TextDelta(text))
            self._shown_tail = (self._shown_tail + text)[-_TAIL:]

    def _emit_reasoning(self, text: str, out: list[StreamEvent]) -> None:
        if self._strip_reasoning:
            text = text.lstrip()
            if not text:
                return
            self._strip_reasoning = False
        if text:
            out.append(ReasoningDelta(text))

    def _start_call(self, name: str, out: list[StreamEvent]) -> tuple[int, str]:
        index, call_id = self._next_index, new_call_id()
        self._next_index += 1
        out.append(ToolCallStart(index=index, id=call_id, name=name))
        return index, call_id

    def _end_call(
        self,
        index: int,
        call_id: str,
        name: str,
        out: list[StreamEvent],
        *,
        raw: str,
        args: dict | None,
        error: str | None = None,
        written: str | None = None,
    ) -> None:
        written = written if args is None else None
        out.append(ToolCallEnd(index=index, id=call_id, name=name, raw=raw, args=args, error=error, written=written))
        self.calls_ended += 1

    def _whole_call(self, name: str, args: dict | None, error: str | None, out: list[StreamEvent]) -> None:
        """Start, arguments and end of a call decided all at once."""
        index, call_id = self._start_call(name, out)
        raw = ""
        if args is not None:
            raw = json.dumps(args, ensure_ascii=False)
            out.append(ToolCallArgsDelta(index, raw))
        self._end_call(index, call_id, name, out, raw=raw, args=args, error=error)


def hold_point(buf: str, window: int, could_be_tag: Callable[[str], bool]) -> int:
    """Where the text that might still become a tag begins: the first "<" among the last `window`
    characters whose tail `could_be_tag`; len(buf) when nothing needs holding back."""
    at = buf.find("<", max(0, len(buf) - window))
    while at != -1:
        if could_be_tag(buf[at:]):
            return at
        at = buf.find("<", at + 1)
    return len(buf)


def is_literal_prefix(tail: str, tags: tuple[str, ...]) -> bool:
    """Whether `tail` is a proper prefix of one of `tags`."""
    return any(len(tail) < len(tag) and tag.startswith(tail) for tag in tags)


def _could_be_think_tag(tail: str) -> bool:
    return is_literal_prefix(tail, THINK_TAGS)
