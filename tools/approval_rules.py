"""Approval by argument values: "run fetch_url without asking for docs.python.org, ask for anything else".

Plain Python: the admin's rows become ArgumentRule values; the first rule of a tool that matches a call
decides whether it waits for a person. A rule must name a tool that exists and one of its arguments, or it
would never match and nobody would notice: tool_name_problem and argument_problem say why a rule cannot be saved.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

Match = Literal["equals", "prefix", "host", "regex"]
Action = Literal["allow", "ask"]
# At most this many tool names in the message that lists the tools a rule may name.
MAX_LISTED = 40


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


def tool_name_problem(name: str, known: Collection[str]) -> str | None:
    """Why a rule cannot name ``name`` (no tool of ``known`` is called so, with the likely one), or None."""
    if name in known:
        return None
    message = f"No tool is called {name!r}."
    likely = difflib.get_close_matches(name, known, n=1) or [k for k in known if k.lower() == name.lower()]
    if likely:
        message += f" Did you mean {likely[0]!r}?"
    if not known:
        return f"{message} No tool is defined."
    shown = sorted(known)
    more = f" and {len(shown) - MAX_LISTED} more" if len(shown) > MAX_LISTED else ""
    return f"{message} The tools: {', '.join(shown[:MAX_LISTED])}{more}."


def argument_problem(tool_name: str, argument: str, arguments: Collection[str] | None) -> str | None:
    """Why a rule of ``tool_name`` cannot check ``argument``, or None. ``arguments``: the tool's argument names,
    None when they are not known here (then any argument is taken)."""
    if arguments is None or argument in arguments:
        return None
    if not arguments:
        return f"{tool_name} takes no arguments: a rule on its arguments would never match."
    return f"{tool_name} has no argument {argument!r}. Its arguments: {', '.join(sorted(arguments))}."
