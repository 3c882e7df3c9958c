"""A lenient Google-style docstring reader: the summary and the per-argument descriptions.

Lenient on purpose: models only need the text, so a docstring that a strict parser would reject
(lower-case ``args:``, no blank line before a section, ``name(type) :desc``) still yields descriptions
rather than an error at import time.
"""

import inspect
import re
from dataclasses import dataclass, field

# Section headers that end the summary. Only "Args" (and its synonyms) is read further.
_ARGS_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
_OTHER_SECTIONS = {
    "returns",
    "return",
    "yields",
    "yield",
    "raises",
    "exceptions",
    "example",
    "examples",
    "note",
    "notes",
    "attributes",
    "see also",
    "todo",
    "warning",
    "warnings",
    "references",
}
_HEADER = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*$")
# "name: desc", "name (type): desc", "name(type) :desc", "*args: desc"
_ARG_ENTRY = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:(?P<desc>.*)$")


@dataclass
class Docstring:
    summary: str = ""
    args: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> Docstring:
    """Split a docstring into its whitespace-normalised summary and its ``Args:`` descriptions."""
    if not doc:
        return Docstring()
    lines = inspect.cleandoc(doc).splitlines()
    first_section = next((i for i, line in enumerate(lines) if _section_name(line)), len(lines))
    summary = " ".join(" ".join(lines[:first_section]).split())
    args: dict[str, str] = {}
    i = first_section
    while i < len(lines):
        section = _section_name(lines[i])
        if section is None:
            i += 1
            continue
        body_end = _section_end(lines, i + 1)
        if section in _ARGS_SECTIONS:
            args.update(_parse_args(lines[i + 1 : body_end]))
        i = body_end
    return Docstring(summary=summary, args=args)


def _section_name(line: str) -> str | None:
    match = _HEADER.match(line)
    if not match:
        return None
    name = match.group(1).strip().lower()
    return name if name in _ARGS_SECTIONS or name in _OTHER_SECTIONS else None


def _section_end(lines: list[str], start: int) -> int:
    """Index of the first line after the section body that starts at ``start``.

    The body ends at the next header or at a non-blank line indented less than the body's first line
    (prose back at the margin after an indented section).
    """
    body_indent = None
    for j in range(start, len(lines)):
        line = lines[j]
        if not line.strip():
            continue
        if _section_name(line) is not None:
            return j
        indent = _indent(line)
        if body_indent is None:
            body_indent = indent
        elif indent < body_indent:
            return j
    return len(lines)


def _parse_args(body: list[str]) -> dict[str, str]:
    """Read ``name: description`` entries; deeper-indented lines continue the current entry."""
    entries: dict[str, list[str]] = {}
    entry_indent = None
    current: str | None = None
    for line in body:
        if not line.strip():
            continue
        indent = _indent(line)
        if entry_indent is None:
            entry_indent = indent
        match = _ARG_ENTRY.match(line.strip()) if indent <= entry_indent else None
        if match:
            current = match.group("name")
            entries[current] = [match.group("desc").strip()]
        elif current is not None:
            entries[current].append(line.strip())
    return {name: " ".join(part for part in parts if part) for name, parts in entries.items()}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
