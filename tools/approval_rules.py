"""Approval by argument values: "run fetch_url without asking for docs.python.org, ask for anything else".

Plain Python: the admin's rows become ArgumentRule values; the first rule of a tool that matches a call
decides whether it waits for a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

Match = Literal["equals", "prefix", "host", "regex"]
Action = Literal["allow", "ask"]


@dataclass(frozen=True)
class ArgumentRule:
    argument: str
    match: Match
    pattern: str
    action: Action

    def matches(self, args: dict[str, Any]) -> bool:
        if self.argument not in args:
            return False
        value = args[self.argument]
        text = value if isinstance(value, str) else str(value)
        if self.match == "equals":
            return text == self.pattern
        if self.match == "prefix":
            return text.startswith(self.pattern)
        if self.match == "host":
            return host_matches(text, self.pattern)
        return re.fullmatch(self.pattern, text) is not None


def host_matches(url: str, host: str) -> bool:
    """The URL's host is `host` or one of its subdomains (docs.example.com matches example.com)."""
    try:
        name = (urlsplit(url.strip()).hostname or "").rstrip(".").lower()
    except ValueError:
        return False
    host = host.strip().rstrip(".").lower()
    return bool(name) and (name == host or name.endswith("." + host))


def decide(rules: tuple[ArgumentRule, ...], args: dict[str, Any]) -> Action | None:
    """The action of the first rule that matches, or None when none does (the tool's own setting holds)."""
    for rule in rules:
        if rule.matches(args):
            return rule.action
    return None
