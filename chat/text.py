"""Text the database cannot store.

JSON may carry a lone surrogate (`"\\ud800"`: what a browser's JSON.stringify writes for half an emoji), which
no UTF-8 text can hold, and NUL, which PostgreSQL's text columns refuse. A person's frame with such text is
refused with an error that names the field, before anything is written: replacing it silently would store
something the person did not write, and half a write would leave a thread stuck. What a model or a tool sends
cannot be refused: there each such character becomes U+FFFD (`storable`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.utils.translation import gettext_noop

from languages.phrases import Phrase

# A surrogate code point on its own (Python keeps a JSON escape of one as it is), or NUL.
_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")


def unstorable_text(value: Any) -> str | None:
    """Where `value` (a decoded JSON value) holds text that cannot be stored: a dotted path ("" for the value
    itself), or None when all of it can. Walked without recursion: a frame's depth is not this function's limit."""
    pending: list[tuple[str, Any]] = [("", value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, str):
            if _UNSTORABLE.search(item):
                return where
        elif isinstance(item, dict):
            for key, child in item.items():
                path = f"{where}.{key}" if where else str(key)
                if _UNSTORABLE.search(str(key)):
                    return path
                pending.append((path, child))
        elif isinstance(item, list):
            pending.extend((f"{where}.{index}" if where else str(index), child) for index, child in enumerate(item))
    return None


def unstorable_message(where: str) -> str:
    if where:
        return Phrase(
            gettext_noop(
                "%(field)s: the text is not valid Unicode (a lone surrogate, e.g. half an emoji, or a NUL character) "
                "and cannot be stored; nothing was changed."
            ),
            field=where,
        )
    return gettext_noop(
        "the text is not valid Unicode (a lone surrogate, e.g. half an emoji, or a NUL character) "
        "and cannot be stored; nothing was changed."
    )


def storable(text: str) -> str:
    """Text from outside a person's frame (a model's answer, a tool's result), which cannot be refused: each
    unstorable character becomes U+FFFD, one for one, so pieces cleaned apart add up to the whole cleaned."""
    return _UNSTORABLE.sub("\ufffd", text) if _UNSTORABLE.search(text) else text


def storable_value(value: Any) -> Any:
    """`value` (JSON data: a call's arguments, an artifact), with `storable` applied to every text in it."""
    if unstorable_text(value) is None:
        return value
    return json.loads(storable(json.dumps(value, ensure_ascii=False)))
