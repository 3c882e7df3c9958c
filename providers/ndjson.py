"""Incremental decoder for newline-delimited JSON (the framing of Ollama's native stream): one frame per line."""

from __future__ import annotations

import codecs


class NDJSONDecoder:
    """Splits a byte stream into lines, however the bytes arrive (inside UTF-8 sequences too)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial: list[str] = []

    def feed(self, data: bytes) -> list[str]:
        return self._lines(self._decoder.decode(data))

    def close(self) -> list[str]:
        """End of stream: the last line may have no newline after it."""
        lines = self._lines(self._decoder.decode(b"", final=True))
        tail = "".join(self._partial)
        self._partial = []
        if tail.strip():
            lines.append(tail)
        return lines

    def _lines(self, text: str) -> list[str]:
        if "\n" not in text:
            if text:
                self._partial.append(text)
            return []
        lines = text.split("\n")
        if self._partial:
            self._partial.append(lines[0])
            lines[0] = "".join(self._partial)
        tail = lines.pop()
        self._partial = [tail] if tail else []
        return [line for line in lines if line.strip()]
