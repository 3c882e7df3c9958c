"""morphXml tool calls: the tool's name is the element, its parameters are child elements.

    <get_weather>
      <location>Seoul</location>
    </get_weather>

Only elements named like a declared tool are calls; any other markup is text. The call starts
(ToolCallStart) as soon as its opening tag is read; its arguments go out in one piece when the closing
tag arrives, because a repeated element further on can still turn a value into an array.

Parameter values are typed by the tool's JSON Schema (see coerce.py). A string parameter's inner text is
taken as written, so HTML or `<Ctrl+C>` inside it is content, not structure; XML entities are decoded.
Leniency, each from real model output (shared/vectors): self-closing calls (`<get_location/>`), spaces in
tags (`< get_location/>`, `</ get_weather>`), a stray extra closing tag, an inner element left unclosed
when the call closes. A call cut off by the end of the reply, or whose elements cannot be made into
arguments, ends with an error the model is shown.

The prompt's other blocks (`<tool_response>`, `<tools>`, `<rules>`, the example call), which small models copy into
their answer, are left out of the visible text with their contents, and so are their stray closing tags.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..types import StreamEvent, ToolCallArgsDelta, ToolDefinition
from .base import Marker, StreamParser, shorten
from .coerce import ArgumentError, Node, build_arguments, is_text
from .prompts import XML_PROMPT_BLOCKS

# An element tag inside a call: <name attrs>, <name/>, </name>. A name must follow "<" (spaces allowed,
# as models write "< get_location/>"), and attributes must be set off by whitespace, so "<Ctrl+C>" is text.
_TAG = re.compile(r"<(/?)[ \t]*([A-Za-z_][\w.\-:]*)(?:\s[^<>]*?)?\s*(/?)>")
_OPEN_REST = re.compile(r"(?:\s[^<>]*?)?\s*(/?)>")  # the rest of a call's opening tag, after its name
_PARTIAL_TAG = re.compile(r"<(/?)([ \t]*)([\w.\-:]*)([ \t]*)")
_MAX_DEPTH = 32  # nesting beyond this is read as text
_OPENER_SPACES = 2  # "<  name": at most this many spaces after "<" in a call opener


@dataclass
class _Read:
    end: int  # offset just past the call's closing tag
    args: dict | None
    error: str | None = None


class XmlParser(StreamParser):
    """Incremental parser for morphXml calls to `tools` (see the module docstring)."""

    def __init__(self, tools: list[ToolDefinition], *, reasoning_open: bool = False, split_think: bool = True) -> None:
        names = {tool.name for tool in tools}
        copied = [block for block in XML_PROMPT_BLOCKS if block not in names]  # a tool named "rules" is called
        super().__init__(reasoning_open=reasoning_open, split_think=split_think, copied_blocks=copied)
        self._tools = {tool.name: tool for tool in tools}
        names = "|".join(re.escape(name) for name in sorted(self._tools, key=len, reverse=True))
        self._opener = re.compile(rf"<[ \t]{{0,{_OPENER_SPACES}}}({names})(?=[\s/>])") if names else None
        self._closer = re.compile(rf"</[ \t]*({names})[ \t]*>") if names else None
        self._window = max((len(name) for name in self._tools), default=0) + _OPENER_SPACES + 4
        self._call: tuple[str, int, str] | None = None  # name, index, id
        self._checked = 0  # how much of the call's text has been tried without finding its end

    # --- visible text -------------------------------------------------------------------

    def _find_marker(self, buf: str, start: int) -> Marker | None:
        if self._opener is None or self._closer is None:
            return None
        found: Marker | None = None
        for kind, pattern in (("call", self._opener), ("drop", self._closer)):
            match = pattern.search(buf, start)
            if match and (found is None or match.start() < found.start):
                found = Marker(kind, match.start(), match.end(), match.group(1))
        return found

    def _could_be_marker(self, tail: str) -> bool:
        match = _PARTIAL_TAG.fullmatch(tail)
        if match is None or not self._tools:
            return False
        closing, spaces, name, after = match.groups()
        if not closing and len(spaces) > _OPENER_SPACES:
            return False
        if after:  # "</get_weather " waits for its ">"; an opener would already have matched
            return bool(closing) and name in self._tools
        return any(tool.startswith(name) for tool in self._tools)

    def _hold_window(self) -> int:
        return self._window

    def _begin_call(self, marker: Marker, out: list[StreamEvent]) -> None:
        index, call_id = self._start_call(marker.name, out)
        self._call = (marker.name, index, call_id)
        self._checked = 0
        self._mode = "call"

    # --- the call -------------------------------------------------------------------------

    def _scan_call(self, out: list[StreamEvent], final: bool) -> bool:
        assert self._call is not None
        name, index, call_id = self._call
        text = self._buf
        if not final and text.find(">", self._checked) == -1:
            return False  # nothing can have closed since the last try
        read = read_call(text, self._tools[name])
        if read is None:
            if not final:
                self._checked = len(text)
                return False
            read = _Read(len(text), None, f"The call to {name} was cut off before its closing tag </{name}>.")
        self._buf = text[read.end :]
        self._call = None
        self._mode = "text"
        raw = ""
        if read.args is not None:
            raw = json.dumps(read.args, ensure_ascii=False)
            out.append(ToolCallArgsDelta(index, raw))
        written = f"<{name}{text[: read.end]}"  # the opener up to the name was consumed as the marker
        self._end_call(index, call_id, name, out, raw=raw, args=read.args, error=read.error, written=written)
        return True


def read_call(text: str, tool: ToolDefinition) -> _Read | None:
    """Read a call from just after the tool's name in its opening tag. None: its end has not arrived yet."""
    name = tool.name
    opening = _OPEN_REST.match(text)
    closer = re.compile(rf"</[ \t]*{re.escape(name)}[ \t]*>")
    if opening is None:  # e.g. "<get_weather <city>…": the whole call, up to its closing tag, is an error
        gt, close = text.find(">"), closer.search(text)
        if gt == -1 or close is None:
            return None
        written = shorten(f"<{name}{text[: gt + 1]}")
        return _Read(close.end(), None, f"The opening tag <{name}> is malformed: {written!r}.")
    if opening.group(1):
        return _Read(opening.end(), {})
    items: list[tuple[str, Node]] = []
    loose_text: list[str] = []
    pos = opening.end()
    while True:
        lt = text.find("<", pos)
        if lt == -1:
            return None
        loose_text.append(text[pos:lt])
        close = closer.match(text, lt)
        if close:
            end = close.end()
            break
        tag = _TAG.match(text, lt)
        if tag is None:
            if text.find(">", lt) == -1:
                return None  # perhaps a tag still arriving
            loose_text.append("<")
            pos = lt + 1
            continue
        is_closing, param, self_closing = tag.group(1), tag.group(2), tag.group(3)
        if is_closing:  # a stray closing tag between parameters
            pos = tag.end()
        elif self_closing:
            items.append((param, Node()))
            pos = tag.end()
        elif is_text(_property(tool, param)):
            value = _read_text_value(text, tag.end(), param, closer)
            if value is None:
                return None
            items.append((param, Node(raw=text[tag.end() : value[0]])))
            pos = value[1]
        else:
            element = _read_element(text, tag.end(), param, {name}, closer, 1)
            if element is None:
                return None
            items.append((param, element[0]))
            pos = element[1]
    return _arguments(tool, items, "".join(loose_text).strip(), end)


def _arguments(tool: ToolDefinition, items: list[tuple[str, Node]], loose: str, end: int) -> _Read:
    properties = tool.parameters.get("properties") or {}
    if not items and loose and len(properties) == 1:
        # <get_weather>Seoul</get_weather> for a tool with one parameter: the text is that parameter.
        items = [(next(iter(properties)), Node(raw=loose))]
    try:
        return _Read(end, build_arguments(items, tool.parameters, tool.name))
    except ArgumentError as exc:
        return _Read(end, None, str(exc))


def _read_text_value(text: str, start: int, param: str, closer: re.Pattern[str]) -> tuple[int, int] | None:
    """A string parameter: everything up to its closing tag, or up to the call's if it was never closed.
    Returns (end of the value, where reading goes on)."""
    own = re.compile(rf"</[ \t]*{re.escape(param)}[ \t]*>").search(text, start)
    call_end = closer.search(text, start)
    if own and (call_end is None or own.start() <= call_end.start()):
        return own.start(), own.end()
    if call_end:
        return call_end.start(), call_end.start()
    return None


def _read_element(
    text: str, pos: int, name: str, enclosing: set[str], closer: re.Pattern[str], depth: int
) -> tuple[Node, int] | None:
    """An element's content up to its closing tag (or an enclosing element's, which closes it too)."""
    start = pos
    children: list[tuple[str, Node]] = []
    while True:
        lt = text.find("<", pos)
        if lt == -1:
            return None
        if closer.match(text, lt):  # the call closes: so does everything left open inside it
            return Node(raw=text[start:lt], children=children), lt
        tag = _TAG.match(text, lt)
        if tag is None:
            if text.find(">", lt) == -1:
                return None
            pos = lt + 1
            continue
        is_closing, child, self_closing = tag.group(1), tag.group(2), tag.group(3)
        if is_closing:
            if child == name:
                return Node(raw=text[start:lt], children=children), tag.end()
            if child in enclosing:
                return Node(raw=text[start:lt], children=children), lt
            pos = tag.end()
        elif self_closing:
            children.append((child, Node()))
            pos = tag.end()
        elif depth >= _MAX_DEPTH:
            pos = tag.end()
        else:
            inner = _read_element(text, tag.end(), child, enclosing | {name}, closer, depth + 1)
            if inner is None:
                return None
            children.append((child, inner[0]))
            pos = inner[1]


def _property(tool: ToolDefinition, name: str) -> object:
    properties = tool.parameters.get("properties")
    return properties.get(name) if isinstance(properties, dict) else None


__all__ = ["XmlParser", "read_call"]
