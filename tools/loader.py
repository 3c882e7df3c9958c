"""Load tools from other packages: every ``Tool`` at the top level of the named modules is registered.

This is how users add their own tools without touching this project: ``AGENTWEB_TOOL_MODULES=my_pkg.tools``.
"""

import importlib
from collections.abc import Iterable

from tools.base import Tool
from tools.registry import ToolRegistry

__all__ = ["ToolModuleError", "load_tool_modules", "parse_module_list"]


class ToolModuleError(ImportError):
    """A tool module could not be imported or its tools could not be registered; the message names the module."""


def parse_module_list(value: str | Iterable[str]) -> list[str]:
    """``"a.b, c"`` or ``["a.b", "c"]`` → ``["a.b", "c"]``, blanks dropped."""
    items = value.split(",") if isinstance(value, str) else value
    return [item.strip() for item in items if item.strip()]


def load_tool_modules(paths: str | Iterable[str], registry: ToolRegistry) -> list[Tool]:
    """Import each dotted module path and register its top-level tools; return the tools added.

    A tool object that is already registered (a module that imports a built-in) is skipped; another tool
    with a taken name is an error, as a silently shadowed tool would be a hard bug to find.
    """
    added: list[Tool] = []
    for path in parse_module_list(paths):
        try:
            module = importlib.import_module(path)
        except Exception as exc:  # a typo, a missing dependency or a crash in the module: all fail the start
            raise ToolModuleError(f"Cannot import tool module {path!r}: {type(exc).__name__}: {exc}") from exc
        for candidate in _top_level_tools(vars(module).values()):
            if registry.get(candidate.name) is candidate:
                continue
            try:
                registry.register(candidate)
            except ValueError as exc:
                raise ToolModuleError(f"Tool module {path!r}: {exc}") from None
            added.append(candidate)
    return added


def _top_level_tools(values: Iterable[object]) -> list[Tool]:
    unique: dict[int, Tool] = {}  # one tool bound to two names is still one tool
    for value in values:
        if isinstance(value, Tool):
            unique.setdefault(id(value), value)
    return list(unique.values())
