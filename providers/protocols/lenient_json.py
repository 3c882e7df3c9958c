"""JSON as models write it: strict first, then two common slips repaired.

- raw control characters (a real newline or tab) inside a string, where JSON wants `\\n` / `\\t`;
- an escape JSON does not know (`\\$`, `\\'`, seen from Cohere Command R+): the backslash is dropped.

Nothing else is guessed: truncated or otherwise broken JSON stays an error.
"""

from __future__ import annotations

import json
from typing import Any

_VALID_ESCAPES = set('"\\/bfnrtu')
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def loads(text: str) -> tuple[Any, str | None]:
    """(value, None), or (None, the strict parser's complaint) when even the repaired text is not JSON."""
    try:
        return json.loads(text), None
    except ValueError as exc:
        error = str(exc)
    repaired = repair(text)
    if repaired != text:
        try:
            return json.loads(repaired), None
        except ValueError:
            pass
    return None, error


def repair(text: str) -> str:
    out: list[str] = []
    in_string = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if not in_string:
            in_string = c == '"'
            out.append(c)
        elif c == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt and nxt in _VALID_ESCAPES:
                out.append(c + nxt)
            elif nxt:  # an escape JSON does not know: keep the character, drop the backslash
                out.append(_CONTROL.get(nxt, nxt))
            i += 2
            continue
        elif c == '"':
            in_string = False
            out.append(c)
        elif c < " ":
            out.append(_CONTROL.get(c, f"\\u{ord(c):04x}"))
        else:
            out.append(c)
        i += 1
    return "".join(out)
