"""Fix the obvious mismatches in a model's arguments, where the schema asks for it, then say what still fails.

Models often send ``"5"`` for an integer, ``"true"`` for a boolean, or an object as a JSON string. Such a
value is converted when the schema at that place wants the other type and the text is an exact spelling
of it; nothing else is touched (no int → str, no float → int, no "yes" → true). A value that is already
valid is never changed, so coercion can only help validation, never hurt it.
"""

import json
import math
import re
from typing import Any

from jsonschema import Draft202012Validator

__all__ = ["coerce", "validation_problems"]

# ASCII digits only: int() and float() also accept other scripts' digits ("٣"), which no schema means.
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BOOLEANS = {"true": True, "false": False}


def coerce(value: Any, schema: dict) -> Any:
    """``value`` with every fixable mismatch against ``schema`` fixed; valid parts are returned unchanged."""
    return _Coercer(Draft202012Validator(schema)).coerce(value, schema)


def validation_problems(value: Any, schema: dict) -> list[str]:
    """Every way ``value`` breaks ``schema``, each prefixed with where it happened (``items[0].name: ...``)."""
    errors = sorted(Draft202012Validator(schema).iter_errors(value), key=lambda error: _path(error.absolute_path))
    return [f"{_path(e.absolute_path)}: {e.message}" if e.absolute_path else e.message for e in errors]


def _path(parts: Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class _Coercer:
    def __init__(self, root: Draft202012Validator) -> None:
        self.root = root  # evolved per subschema, so $ref inside an explicit schema still resolves

    def valid(self, value: Any, schema: Any) -> bool:
        return self.root.evolve(schema=schema).is_valid(value)

    def coerce(self, value: Any, schema: Any) -> Any:
        if not isinstance(schema, dict) or self.valid(value, schema):
            return value
        for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
            candidate = self.coerce(value, branch)
            if self.valid(candidate, schema):
                return candidate
        types = _types(schema)
        if isinstance(value, str):
            value = _from_text(value, types)
        if isinstance(value, dict) and "object" in types:
            return self._object(value, schema)
        if isinstance(value, list) and "array" in types:
            return self._array(value, schema)
        return value

    def _object(self, value: dict, schema: dict) -> dict:
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        coerced = {}
        for key, item in value.items():
            sub = properties.get(key, additional if isinstance(additional, dict) else None)
            coerced[key] = self.coerce(item, sub) if sub is not None else item
        return coerced

    def _array(self, value: list, schema: dict) -> list:
        prefix = schema.get("prefixItems", [])
        items = schema.get("items")
        if isinstance(items, list):  # draft-07 tuple form in a hand-written schema
            prefix, items = items, None
        coerced = []
        for index, item in enumerate(value):
            sub = prefix[index] if index < len(prefix) else items
            coerced.append(self.coerce(item, sub) if isinstance(sub, dict) else item)
        return coerced


def _types(schema: dict) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return set(declared)
    # Hand-written schemas often leave "type" out next to "properties" / "items".
    implied = set()
    if "properties" in schema or "additionalProperties" in schema:
        implied.add("object")
    if "items" in schema or "prefixItems" in schema:
        implied.add("array")
    return implied


def _from_text(text: str, types: set[str]) -> Any:
    """The value ``text`` spells in one of ``types``, or ``text`` itself when it spells none."""
    stripped = text.strip()
    if types & {"integer", "number"} and _INTEGER.fullmatch(stripped):
        try:
            return int(stripped)
        except ValueError:  # more digits than Python converts (sys.int_info.default_max_str_digits)
            return text
    if "number" in types and _NUMBER.fullmatch(stripped):
        number = float(stripped)
        return number if math.isfinite(number) else text
    if "boolean" in types and stripped.lower() in _BOOLEANS:
        return _BOOLEANS[stripped.lower()]
    if types & {"object", "array"} and stripped[:1] in ("{", "["):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            return text
        wanted = tuple(kind for name, kind in (("object", dict), ("array", list)) if name in types)
        return parsed if isinstance(parsed, wanted) else text
    return text
