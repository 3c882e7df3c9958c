"""A small reader of gettext .po files (the venv has no polib): each entry's msgctxt, msgid, plural, msgstr(s),
flags and whether it is obsolete. Enough for the catalogues' tests; GNU msgfmt remains the judge of syntax."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

_KEYWORD = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(".*")\s*$')


@dataclass
class Entry:
    msgid: str = ""
    msgid_plural: str | None = None
    msgctxt: str | None = None
    msgstr: dict[str, str] = field(default_factory=dict)  # "msgstr" or "msgstr[0]", "msgstr[1]", …
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False

    @property
    def key(self) -> tuple[str | None, str]:
        return (self.msgctxt, self.msgid)

    @property
    def translated(self) -> bool:
        return bool(self.msgstr) and all(self.msgstr.values())


def _string(literal: str) -> str:
    return ast.literal_eval(literal)  # a C string literal: Python's rules cover what .po files use


def read(path: Path) -> list[Entry]:
    """The entries of the .po file at `path`, the header (msgid "") included."""
    entries: list[Entry] = []
    entry, part = None, None
    for raw in [*Path(path).read_text(encoding="utf-8").splitlines(), ""]:
        line = raw.strip()
        obsolete = line.startswith("#~")
        if obsolete:
            line = line[2:].strip()
        if not line:
            if entry is not None:
                entries.append(entry)
            entry, part = None, None
            continue
        if line.startswith("#,"):
            entry = entry or Entry()
            entry.flags |= {flag.strip() for flag in line[2:].split(",") if flag.strip()}
            continue
        if line.startswith("#"):
            entry = entry or Entry()
            continue
        entry = entry or Entry()
        entry.obsolete = entry.obsolete or obsolete
        match = _KEYWORD.match(line)
        if match:
            part, value = match.group(1), _string(match.group(2))
        elif line.startswith('"') and part is not None:
            value = _string(line)
        else:
            raise ValueError(f"{path}: cannot read {raw!r}")
        if part.startswith("msgstr"):
            entry.msgstr[part] = entry.msgstr.get(part, "") + value
        elif part == "msgid":
            entry.msgid += value
        elif part == "msgid_plural":
            entry.msgid_plural = (entry.msgid_plural or "") + value
        else:
            entry.msgctxt = (entry.msgctxt or "") + value
    return entries


def messages(path: Path) -> list[Entry]:
    """The live entries (no header, nothing obsolete)."""
    return [e for e in read(path) if e.msgid != "" and not e.obsolete]
