"""A tool's return value as text, capped twice: for the model's context and for storage.

A tool may return 50 MB. Nothing here holds more than the caps, plus one batch of about 64 KB of top-level
items while a huge list or dict is encoded: a string is sliced at both ends, a list or dict is encoded a batch
at a time with the C encoder, and only its first and last ``cap`` characters are kept.
"""

import dataclasses
import itertools
import json
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_CONTENT_CHARS", "MAX_STORED_CHARS", "Capped", "capture", "to_content", "truncate"]

MAX_CONTENT_CHARS = 65536  # what goes back into the model's context; a runaway result must not fill it
MAX_STORED_CHARS = 1024 * 1024  # what is kept in the database and shown in the tool card


@dataclass(frozen=True)
class Capped:
    """The two ends of a text too long to keep whole: ``head`` is the whole text when ``total <= cap``."""

    head: str
    tail: str
    total: int

    def text(self, limit: int) -> str:
        """At most ``limit`` characters (``limit`` no larger than the cap it was captured with)."""
        if self.total <= limit:
            return self.head[: self.total]
        # Size the marker for the largest count it could show, so the result never exceeds the limit.
        keep = max(limit - len(_marker(self.total)), 0)
        head, tail = keep - keep // 2, keep // 2
        return self.head[:head] + _marker(self.total - keep) + (self.tail[-tail:] if tail else "")


def capture(value: Any, cap: int = MAX_STORED_CHARS) -> Capped:
    """The text form of ``value`` (see ``to_content``), keeping at most ``cap`` characters at each end."""
    if isinstance(value, str):
        return _capture_text(value, cap)
    collector = _Collector(cap)
    for chunk in _chunks(value):
        collector.add(chunk)
    return collector.result()


def to_content(value: Any) -> str:
    """The whole text the model would read for ``value``: str as is, JSON for data, else ``str()``."""
    return value if isinstance(value, str) else "".join(_chunks(value))


def truncate(content: str, limit: int = MAX_CONTENT_CHARS) -> str:
    """Cap ``content`` at ``limit`` characters, keeping head and tail (answers often sit at either end)."""
    return _capture_text(content, limit).text(limit)


def _capture_text(text: str, cap: int) -> Capped:
    if len(text) <= cap:
        return Capped(text, "", len(text))
    return Capped(text[:cap], text[-cap:], len(text))  # two slices: nothing else of a huge string is copied


def _marker(removed: int) -> str:
    return f"\n…[truncated {removed} characters]…\n"


def _chunks(value: Any) -> Iterator[str]:
    """The text of a non-string ``value`` in pieces; joined, they are ``json.dumps(value)`` (or ``str(value)``)."""
    data = _as_json_data(value)
    if data is _NOT_JSON:
        yield str(value)
    elif isinstance(data, dict) and data:
        # Dumping a dict of a batch of items keeps json's key rules (int keys become strings).
        yield from _joined("{", _encoded_batches(iter(data.items()), dict), "}")
    elif isinstance(data, list | tuple) and data:
        yield from _joined("[", _encoded_batches(iter(data), list), "]")
    else:
        yield _dumps(data)


_NOT_JSON = object()
# Text per call of the C encoder: large enough to run at its speed, small enough to bound memory.
_PIECE_CHARS = 64 * 1024


def _encoded_batches(items: Iterator[Any], container: type) -> Iterator[str]:
    """The items encoded a batch at a time (without brackets); batches grow or shrink toward _PIECE_CHARS."""
    size = 1
    while batch := list(itertools.islice(items, size)):
        piece = _dumps(container(batch))[1:-1]
        yield piece
        size = max(1, min(size * 4, size * _PIECE_CHARS // max(len(piece), 1)))


def _joined(opening: str, pieces: Iterator[str], closing: str) -> Iterator[str]:
    yield opening
    for index, piece in enumerate(pieces):
        yield piece if index == 0 else ", " + piece
    yield closing


def _as_json_data(value: Any) -> Any:
    if value is None or isinstance(value, dict | list | tuple | str | int | float | bool):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    pydantic = sys.modules.get("pydantic")  # never imported here: an instance means it already is
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    return _NOT_JSON


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class _Collector:
    """Keeps the first and the last ``cap`` characters of a stream of chunks, and counts them all."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head: list[str] = []
        self.head_len = 0
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.total = 0

    def add(self, chunk: str) -> None:
        self.total += len(chunk)
        if self.head_len < self.cap:
            piece = chunk[: self.cap - self.head_len]
            self.head.append(piece)
            self.head_len += len(piece)
        self.tail.append(chunk)
        self.tail_len += len(chunk)
        while self.tail_len - len(self.tail[0]) >= self.cap:
            self.tail_len -= len(self.tail.popleft())

    def result(self) -> Capped:
        if self.total <= self.cap:
            return Capped("".join(self.head), "", self.total)
        return Capped("".join(self.head), "".join(self.tail)[-self.cap :], self.total)
