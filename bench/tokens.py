"""Stamped tokens: what the bench model server streams and every reader (websocket client, bare httpx reader,
browser) decodes.

A stamp token is `§SSSS.TTTTTTT ` (14 characters, ASCII but for `§`, which is one UTF-16 unit too): SSSS is
the token's sequence number and TTTTTTT the server's send time, microseconds of `time.time_ns()` modulo
36**7 (about 21.7 hours), both base 36, zero-padded. Server and readers run on one machine, so a reader turns
a stamp into a latency with its own `time.time_ns()`: (now_us - T) mod 36**7.

The bench request is an ordinary chat-completions request whose last user message is `bench {json spec}`
(see `Spec`): the app under test forwards it unchanged, so a websocket client chooses what the model streams.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
SEQ_WIDTH = 4
TIME_WIDTH = 7
TIME_MOD = 36**TIME_WIDTH
STAMP_LENGTH = 1 + SEQ_WIDTH + 1 + TIME_WIDTH + 1  # "§" seq "." time " "
STAMP_RE = re.compile(r"§([0-9a-z]{4})\.([0-9a-z]{7}) ")
PREFIX = "bench "


def b36(value: int, width: int) -> str:
    digits = []
    for _ in range(width):
        value, digit = divmod(value, 36)
        digits.append(ALPHABET[digit])
    return "".join(reversed(digits))


def now_us() -> int:
    return time.time_ns() // 1000


def time_code(us: int | None = None) -> str:
    return b36((now_us() if us is None else us) % TIME_MOD, TIME_WIDTH)


def stamp(seq: int, code: str) -> str:
    return f"§{b36(seq, SEQ_WIDTH)}.{code} "


def latency_us(stamp_code: str, received_us: int) -> int:
    return (received_us - int(stamp_code, 36)) % TIME_MOD


def decode(text: str, received_us: int) -> list[tuple[int, int]]:
    """(seq, latency µs) of every stamp in `text`, received at `received_us`."""
    return [(int(s, 36), latency_us(t, received_us)) for s, t in STAMP_RE.findall(text)]


@dataclass
class Spec:
    """What the bench model server answers to one turn."""

    id: str = ""
    tokens: int = 100  # tokens of the text answer
    rate: float = 0.0  # tokens per second; 0: as fast as the connection takes them
    tools: int = 0  # tool calls (calculator) in the first step; the text answer comes in the step after
    kind: str = "stamp"  # stamp: every token a stamp; markdown: markdown words with a stamp every `stamp_every`
    stamp_every: int = 50
    batch: int = 64  # unpaced: events per socket write
    close: bool = False  # close-delimited body instead of chunked transfer encoding
    extra: dict = field(default_factory=dict)

    def message(self) -> str:
        return PREFIX + json.dumps({k: v for k, v in asdict(self).items() if v != getattr(Spec, k, None)})

    @classmethod
    def parse(cls, content: str) -> Spec | None:
        if not content.startswith(PREFIX):
            return None
        try:
            values = json.loads(content[len(PREFIX) :])
        except ValueError:
            return None
        known = {k: v for k, v in values.items() if k in cls.__dataclass_fields__}
        return cls(**known)


# --- markdown text for the rendering benchmark ----------------------------------------------------

_WORDS = str.split(
    "the model streams tokens into the browser while the person reads and every tool call shows up as a card "
    "with its arguments status duration and result so that nothing is lost on a reload"
)


def markdown_tokens(count: int, stamp_every: int) -> list[str | None]:
    """`count` tokens of markdown (headings, paragraphs, bold, lists, code blocks); None marks where a stamp
    goes: every `stamp_every`-th token and the last one."""
    tokens: list[str | None] = []
    section = 0
    i = 0
    while len(tokens) < count:
        block = i % 7
        i += 1
        if block == 0:
            section += 1
            tokens += ["\n## ", f"Section {section}", "\n\n"]
        elif block in (1, 3, 5):
            for j in range(40):
                word = _WORDS[(i * 7 + j) % len(_WORDS)]
                tokens.append(f"**{word}** " if j % 11 == 5 else f"{word} ")
            tokens.append("\n\n")
        elif block == 2:
            for j in range(6):
                tokens += ["- ", f"item {j} ", "with `code` ", "and text\n"]
            tokens.append("\n")
        elif block == 4:
            tokens += ["```python\n"]
            for j in range(8):
                tokens += ["def ", f"f{j}", "(x):", "\n    return ", f"x * {j}", "\n"]
            tokens += ["```\n\n"]
        else:
            tokens += ["> ", "a quoted ", "line of ", "text\n\n"]
    tokens = tokens[:count]
    out: list[str | None] = list(tokens)
    for k in range(stamp_every - 1, count, stamp_every):
        out[k] = None
    if count:
        out[-1] = None
    return out
