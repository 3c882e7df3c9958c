"""A trigger's prompt template: text with `{field}` and `{field.sub}` placeholders filled from the posted JSON.

Nothing is evaluated: a placeholder is a path of keys (and list indexes) into the payload, nothing else, and `{{` /
`}}` write a brace. A string is put in as it is, any other JSON value as compact JSON. A placeholder whose path the
payload does not have refuses the delivery, naming the field (MissingField)."""

from __future__ import annotations

import json
import re
from typing import Any

#: `{name}`, `{name.sub}`, `{items.0}`: letters, digits, `_` and `-` between dots.
PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\}")
#: The longest template a trigger may have, and the most placeholders it may hold.
MAX_TEMPLATE_CHARS = 20_000
MAX_PLACEHOLDERS = 100


class BadTemplate(ValueError):
    """The template cannot be read (a stray brace, an empty placeholder); the message says where."""


class MissingField(LookupError):
    def __init__(self, field: str):
        super().__init__(field)
        self.field = field


def parse(template: str) -> list[str | tuple[str, ...]]:
    """The template's pieces: literal text, and placeholders as their path. BadTemplate when it cannot be read."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise BadTemplate(f"A prompt template has at most {MAX_TEMPLATE_CHARS:,} characters.")
    pieces: list[str | tuple[str, ...]] = []
    text: list[str] = []
    at = 0
    while at < len(template):
        char = template[at]
        if char in "{}" and template[at : at + 2] == char * 2:
            text.append(char)
            at += 2
            continue
        if char == "}":
            raise BadTemplate(f"A lone '}}' at character {at + 1}: write '}}}}' for a brace.")
        if char == "{":
            found = PLACEHOLDER.match(template, at)
            if found is None:
                raise BadTemplate(
                    f"A '{{' at character {at + 1} opens no placeholder: write {{field}} or {{field.sub}},"
                    " or '{{' for a brace."
                )
            if text:
                pieces.append("".join(text))
                text = []
            pieces.append(tuple(found.group(1).split(".")))
            at = found.end()
            continue
        text.append(char)
        at += 1
    if text:
        pieces.append("".join(text))
    if sum(isinstance(piece, tuple) for piece in pieces) > MAX_PLACEHOLDERS:
        raise BadTemplate(f"A prompt template holds at most {MAX_PLACEHOLDERS} placeholders.")
    return pieces


def fields(template: str) -> list[str]:
    """The placeholders' names, as written, in order (each once)."""
    return list(dict.fromkeys(".".join(piece) for piece in parse(template) if isinstance(piece, tuple)))


def render(template: str, payload: dict[str, Any]) -> str:
    """The prompt for `payload`; MissingField naming the first placeholder the payload does not have."""
    out: list[str] = []
    for piece in parse(template):
        if isinstance(piece, str):
            out.append(piece)
            continue
        value: Any = payload
        for key in piece:
            if isinstance(value, dict) and key in value:
                value = value[key]
            elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            else:
                raise MissingField(".".join(piece))
        out.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return "".join(out)
