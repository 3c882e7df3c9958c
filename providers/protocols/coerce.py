"""XML parameter values → JSON arguments, typed by the tool's JSON Schema.

In XML everything is text; the schema says what it was meant to be. Numbers, booleans and null are
read from their text; arrays come from a repeated element, from `<item>` children, from JSON text
(`[3, 4, 5]`) or, for arrays of numbers and booleans, from comma- or newline-separated text; objects come
from child elements or from JSON / Python-dict text (`{'min': 3}`). A value that does not fit its schema
is left as the text it was, so the tool's own validation can tell the model what is wrong. Parameters the
schema does not type are guessed: a number is a number, true/false a boolean, anything else text.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_INTEGER = re.compile(r"[-+]?\d+")
_CDATA = re.compile(r"\s*<!\[CDATA\[(.*)\]\]>\s*", re.DOTALL)
_SCALARS = ("number", "integer", "boolean")
_XML_ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#\d+|#[xX][0-9a-fA-F]+);")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def decode_xml_entities(text: str) -> str:
    """The five XML entities and numeric references; anything else (HTML's &nbsp; …) stays as written."""
    if "&" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in _NAMED:
            return _NAMED[name]
        try:
            code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
            return chr(code)
        except (ValueError, OverflowError):
            return match.group(0)

    return _XML_ENTITY.sub(replace, text)


@dataclass
class Node:
    """An element as read: its inner text exactly as written, and its child elements in order."""

    raw: str = ""
    children: list[tuple[str, Node]] = field(default_factory=list)


class ArgumentError(ValueError):
    """The elements cannot be made into arguments (a parameter given twice, …); the text says why."""


def schema_types(schema: Any) -> list[str]:
    """The JSON types a schema allows, in its order; [] when it does not say."""
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    types: list[str] = []
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or ():
            types += [t for t in schema_types(sub) if t not in types]
    if types:
        return types
    if "properties" in schema:
        return ["object"]
    if "items" in schema:
        return ["array"]
    values = schema.get("enum") or ([schema["const"]] if "const" in schema else [])
    inferred = {_json_type(v) for v in values}
    return sorted(inferred) if inferred else []


def is_text(schema: Any) -> bool:
    """A string parameter: its inner text is taken as written, markup and all."""
    types = schema_types(schema)
    return "string" in types and "object" not in types and "array" not in types


def build_arguments(items: list[tuple[str, Node]], schema: Any, where: str) -> dict[str, Any]:
    """The arguments object from a call's (or an object parameter's) child elements. Raises ArgumentError."""
    properties = _variant(schema, "object").get("properties") or {}
    grouped: dict[str, list[Node]] = {}
    for name, node in items:
        grouped.setdefault(name, []).append(node)
    args: dict[str, Any] = {}
    for name, nodes in grouped.items():
        sub = properties.get(name)
        types = schema_types(sub)
        if len(nodes) == 1:
            args[name] = coerce(nodes[0], sub, f"{where}.{name}")
        elif "array" in types:
            item_schema = _items(sub)
            args[name] = [coerce(node, item_schema, f"{where}.{name}") for node in nodes]
        elif not types:
            args[name] = [coerce(node, None, f"{where}.{name}") for node in nodes]
        else:
            raise ArgumentError(
                f"<{name}> is given {len(nodes)} times in {where}, but it takes one value: give it once."
            )
    return args


def coerce(node: Node, schema: Any, where: str) -> Any:
    types = schema_types(schema)
    if not node.children or is_text(schema):
        return coerce_text(element_text(node), schema)
    if "array" in types or (not types and _looks_like_list(node)):
        item_schema = _items(schema)
        return [coerce(child, item_schema, where) for _, child in node.children]
    return build_arguments(node.children, schema, where)


def element_text(node: Node) -> str:
    cdata = _CDATA.fullmatch(node.raw)
    if cdata:
        return cdata.group(1)
    return decode_xml_entities(node.raw).strip()


def coerce_text(text: str, schema: Any) -> Any:
    types = schema_types(schema)
    if not types:
        return _guess(text)
    for kind in sorted(types, key=lambda t: t == "string"):  # a typed reading before plain text
        ok, value = _as(kind, text, schema)
        if ok:
            return value
    return text


def _as(kind: str, text: str, schema: Any) -> tuple[bool, Any]:
    if kind == "string":
        return True, text
    if kind in ("number", "integer"):
        number = _number(text)
        if number is None or (kind == "integer" and number != int(number)):
            return False, None
        return True, int(number) if kind == "integer" else number
    if kind == "boolean":
        lowered = text.lower()
        return (True, lowered == "true") if lowered in ("true", "false") else (False, None)
    if kind == "null":
        return (True, None) if text.lower() in ("", "null", "none") else (False, None)
    if kind == "array":
        return _as_array(text, _items(schema))
    if kind == "object":
        value = _literal(text) if text.startswith("{") else None
        return (True, value) if isinstance(value, dict) else (False, None)
    return False, None


def _as_array(text: str, item_schema: Any) -> tuple[bool, list[Any]]:
    if text.startswith("["):
        value = _literal(text)
        if isinstance(value, list):
            return True, [coerce_text(v, item_schema) if isinstance(v, str) else v for v in value]
    if not text:
        return True, []
    if any(t in _SCALARS for t in schema_types(item_schema)):
        # "1, 2, 3" or one per line: only for numbers and booleans, where a comma cannot be part of a value
        parts = text.splitlines() if "\n" in text else text.split(",")
        return True, [coerce_text(p.strip(), item_schema) for p in parts if p.strip()]
    return True, [coerce_text(text, item_schema)]


def _guess(text: str) -> Any:
    number = _number(text)
    if number is not None:
        return number
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _number(text: str) -> int | float | None:
    try:
        if _INTEGER.fullmatch(text):
            return int(text)
        if _NUMBER.fullmatch(text):
            value = float(text)
            return value if math.isfinite(value) else None
    except ValueError:  # more digits than int() accepts
        pass
    return None


def _literal(text: str) -> Any:
    """JSON, or a Python literal (single quotes, True/None) as models sometimes write objects."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        # Through JSON and back: tuples become lists, and sets or bytes (not JSON) are refused.
        return json.loads(json.dumps(ast.literal_eval(text)))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _looks_like_list(node: Node) -> bool:
    names = {name for name, _ in node.children}
    return len(names) == 1 and (len(node.children) > 1 or names == {"item"})


def _variant(schema: Any, kind: str) -> dict[str, Any]:
    """The part of a schema (itself, or one of its anyOf / oneOf) that describes `kind`."""
    if not isinstance(schema, dict):
        return {}
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or ():
            if kind in schema_types(sub):
                return sub
    return schema


def _items(schema: Any) -> Any:
    items = _variant(schema, "array").get("items")
    return items if isinstance(items, dict) else None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"
