"""Incremental decoder for Server-Sent Events (the framing of OpenAI- and Anthropic-style streams).

Follows the event-stream parsing rules of the HTML standard, limited to what model servers use:
`data:` lines (joined with "\\n"), `event:`, comments (lines starting with ':'); `id:` and `retry:` are
read and ignored. Bytes may arrive split anywhere: inside a UTF-8 sequence, inside a field name, or
between the \\r and \\n of a line ending.

Each fed chunk is decoded and scanned once; an unfinished line is kept as a list of pieces and joined
only when its end arrives, so a long line fed in tiny pieces costs linear time, not quadratic.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str | None
    data: str


class SSEDecoder:
    def __init__(self) -> None:
        # utf-8-sig drops the optional byte-order mark the standard allows at the very start of a stream;
        # "replace" because one bad byte from a server should not end the whole answer.
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._partial: list[str] = []  # pieces of the line whose end has not arrived yet
        self._skip_lf = False  # the previous chunk ended with \r: a leading \n belongs to that line ending
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[SSEEvent]:
        return self._feed_text(self._decoder.decode(data))

    def close(self) -> list[SSEEvent]:
        """End of stream: flush an unterminated last line and a last event that had no blank line after it."""
        events = self._feed_text(self._decoder.decode(b"", final=True))
        if self._partial:
            line = "".join(self._partial)
            self._partial = []
            self._line(line, events)
        self._dispatch(events)
        return events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        if not text:
            return events
        if self._skip_lf:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return events
        if "\r" in text:
            # Normalise \r\n and lone \r to \n; a trailing \r may be the first half of a \r\n split across chunks.
            self._skip_lf = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        if len(lines) == 1:
            self._partial.append(text)
            return events
        if self._partial:
            self._partial.append(lines[0])
            lines[0] = "".join(self._partial)
        tail = lines.pop()
        self._partial = [tail] if tail else []
        for line in lines:
            self._line(line, events)
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        # Fast path: nearly every line of a model stream is a data line.
        if line.startswith("data:"):
            value = line[5:]
            self._data.append(value[1:] if value.startswith(" ") else value)
            return
        if line[0] == ":":
            return  # comment, e.g. a keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":  # "data" without a colon: an empty data line
            self._data.append(value)
        elif name == "event":
            self._event = value

    def _dispatch(self, events: list[SSEEvent]) -> None:
        # The standard dispatches nothing for an event without data lines, but still forgets its type.
        if self._data:
            events.append(SSEEvent(self._event or None, "\n".join(self._data)))
            self._data = []
        self._event = None
