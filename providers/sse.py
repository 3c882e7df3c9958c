"""Incremental decoder for Server-Sent Events (the framing of OpenAI- and Anthropic-style streams).

Follows the event-stream parsing rules of the HTML standard, limited to what model servers use:
`data:` lines (joined with "\\n"), `event:`, comments (lines starting with ':'); `id:` and `retry:` are
read and ignored. Bytes may arrive split anywhere: inside a UTF-8 sequence, inside a field name, or
between the \\r and \\n of a line ending.

Lines are cut in bytes (\\r and \\n never occur inside a UTF-8 sequence) and each complete line is
decoded once, so a chunk that holds whole lines, as a model server's chunks nearly always do, costs one
split and one decode per line. An unfinished line is kept as a list of pieces and joined only when its
end arrives, so a long line fed in tiny pieces costs linear time, not quadratic.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str | None
    data: str


_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    def __init__(self) -> None:
        # The optional byte-order mark the standard allows at the very start of a stream is dropped;
        # bad bytes decode as U+FFFD ("replace") because one bad byte should not end the whole answer.
        self._start: bytes | None = b""  # the stream's first bytes while they could still be a BOM
        self._partial: list[bytes] = []  # pieces of the line whose end has not arrived yet
        self._skip_lf = False  # the previous chunk ended with \r: a leading \n belongs to that line ending
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[SSEEvent]:
        if self._start is not None:
            data = self._after_bom(data)
        events: list[SSEEvent] = []
        if not data:
            return events
        if (
            not self._partial
            and not self._skip_lf
            and data.startswith(b"data: ")
            and data.find(b"\n") == len(data) - 2
            and data.endswith(b"\n\n")
            and b"\r" not in data
        ):
            # Fastest path, one whole event per chunk as most servers send them: "data: …" and a blank line.
            text = data[6:-2].decode("utf-8", "replace")
            if self._data:  # data lines of this event came in earlier chunks
                self._data.append(text)
                text = "\n".join(self._data)
                self._data = []
            events.append(SSEEvent(self._event or None, text))
            self._event = None
            return events
        if self._skip_lf:
            self._skip_lf = False
            if data[0] == 10:  # b"\n"
                data = data[1:]
                if not data:
                    return events
        if b"\r" in data:
            # Normalise \r\n and lone \r to \n; a trailing \r may be the first half of a \r\n split across chunks.
            self._skip_lf = data[-1] == 13
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = data.split(b"\n")
        if len(lines) == 1:
            self._partial.append(data)
            return events
        if self._partial:
            self._partial.append(lines[0])
            lines[0] = b"".join(self._partial)
        tail = lines.pop()
        self._partial = [tail] if tail else []
        for line in lines:
            # Fast path: nearly every line of a model stream is a data line or the blank line after it.
            if line.startswith(b"data: "):
                self._data.append(line[6:].decode("utf-8", "replace"))
            elif not line:
                if self._data:
                    data_lines = self._data
                    events.append(
                        SSEEvent(self._event or None, data_lines[0] if len(data_lines) == 1 else "\n".join(data_lines))
                    )
                    self._data = []
                self._event = None
            elif line.startswith(b"data:"):
                self._data.append(line[5:].decode("utf-8", "replace"))
            else:
                self._line(line.decode("utf-8", "replace"))
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: flush an unterminated last line and a last event that had no blank line after it."""
        events: list[SSEEvent] = []
        if self._start:  # fewer bytes than a BOM in all: they were not one
            self._partial.append(self._start)
        self._start = None
        if self._partial:
            line = b"".join(self._partial)
            self._partial = []
            events += self.feed(line + b"\n")
        self._dispatch(events)
        return events

    def _after_bom(self, data: bytes) -> bytes:
        start = self._start + data if self._start else data
        if len(start) < len(_BOM) and _BOM.startswith(start):
            self._start = start
            return b""
        self._start = None
        return start[len(_BOM) :] if start.startswith(_BOM) else start

    def _line(self, line: str) -> None:
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
