"""What a tool may ask a person mid-call (ToolContext.elicit): the requested schema, as MCP restricts it, and the
check of an answer against it.

MCP's elicitation asks with a flat object schema: each property a string (optionally with `format` email, uri, date
or date-time, and `minLength` / `maxLength`), a number or integer (`minimum` / `maximum`), a boolean, or an enum
(`enum`, optionally with `enumNames`, or `oneOf` of `{const, title}`), plus `required`. A page builds its form from
that; the server checks the answer against the same schema before the tool gets it.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError

__all__ = ["FORMATS", "InvalidRequest", "check_requested_schema", "content_problems"]

MAX_PROPERTIES = 50
MAX_SCHEMA_CHARS = 64 * 1024
PRIMITIVE_TYPES = {"string", "number", "integer", "boolean"}
FORMATS = ("email", "uri", "date", "date-time")


class InvalidRequest(ValueError):
    """A requested schema that cannot be shown as a form; the message says why (the tool, or the MCP server
    through the MCP client, gets it as the request's error)."""


def check_requested_schema(schema: Any) -> dict[str, Any]:
    """The schema as plain JSON data, when it is one a form can be built from; else InvalidRequest."""
    if not isinstance(schema, dict):
        raise InvalidRequest("The requested schema must be a JSON object.")
    try:
        text = json.dumps(schema, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(f"The requested schema is not JSON: {exc}") from None
    if len(text) > MAX_SCHEMA_CHARS:
        raise InvalidRequest(f"The requested schema is too large ({len(text)} characters; at most {MAX_SCHEMA_CHARS}).")
    schema = json.loads(text)
    if schema.get("type") != "object":
        raise InvalidRequest('The requested schema must be {"type": "object", "properties": {...}}.')
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise InvalidRequest("The requested schema's properties must be an object.")
    if len(properties) > MAX_PROPERTIES:
        raise InvalidRequest(f"The requested schema has {len(properties)} properties; at most {MAX_PROPERTIES}.")
    for name, prop in properties.items():
        _check_property(name, prop)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(n, str) and n in properties for n in required):
        raise InvalidRequest("The requested schema's required must list names of its properties.")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise InvalidRequest(f"The requested schema is not a valid JSON Schema: {exc.message}") from None
    return schema


def _check_property(name: str, prop: Any) -> None:
    where = f"The requested property {name[:100]!r}"
    if not isinstance(prop, dict):
        raise InvalidRequest(f"{where} must be a schema object.")
    kind = prop.get("type")
    if kind not in PRIMITIVE_TYPES:
        raise InvalidRequest(
            f"{where} has type {kind!r}: a form asks only for strings, numbers, integers, booleans and enums."
        )
    if "enum" in prop and not (isinstance(prop["enum"], list) and prop["enum"]):
        raise InvalidRequest(f"{where}: enum must be a non-empty list.")
    if "oneOf" in prop:
        options = prop["oneOf"]
        if not (isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options)):
            raise InvalidRequest(f"{where}: oneOf must list {{const, title}} options.")
    if prop.get("format") is not None and prop.get("format") not in FORMATS:
        raise InvalidRequest(f"{where} has format {prop['format']!r}; a form knows {', '.join(FORMATS)}.")


def content_problems(schema: dict[str, Any], content: Any) -> list[str]:
    """Every way an accepted answer's `content` does not fit the requested schema (no problem: []). Properties
    the schema does not name are refused too: a form never sends any."""
    if not isinstance(content, dict):
        return ["the answer must be an object of the requested fields"]
    strict = {"additionalProperties": False, **schema}
    validator = Draft202012Validator(strict, format_checker=FORMAT_CHECKER)
    return sorted(_describe(error) for error in validator.iter_errors(content))


def _describe(error) -> str:
    where = ".".join(str(p) for p in error.absolute_path)[:100]
    if error.validator == "format":
        message = f"is not a valid {error.validator_value}"
    elif error.validator == "additionalProperties":
        message = "names a field that was not asked for"
    else:
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
    return f"{where}: {message}" if where else message


# --- the formats MCP names, checked the same way everywhere (jsonschema's own need optional packages) -----------

FORMAT_CHECKER = FormatChecker(formats=())
_EMAIL = re.compile(r"[^@\s]+@[^@\s.][^@\s]*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


@FORMAT_CHECKER.checks("email")
def _is_email(value: object) -> bool:
    return not isinstance(value, str) or bool(_EMAIL.fullmatch(value))


@FORMAT_CHECKER.checks("uri")
def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(_SCHEME.fullmatch(parts.scheme)) and bool(parts.netloc or parts.path)


@FORMAT_CHECKER.checks("date")
def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


@FORMAT_CHECKER.checks("date-time")
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE_TIME.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
