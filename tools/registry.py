"""Name → Tool lookup, and the default registry: the built-in tools plus those of AGENTWEB_TOOL_MODULES."""

from collections.abc import Iterable
from functools import cache

from tools.base import Tool

__all__ = ["BUILTIN_MODULES", "ToolRegistry", "build_registry", "default_registry"]

# One module per built-in tool (or family of tools); loaded the same way as the user's own modules.
BUILTIN_MODULES = (
    "tools.builtin.calculator",
    "tools.builtin.current_time",
    "tools.builtin.fetch_url",
    "tools.builtin.memory",
    "tools.builtin.search_threads",
)


class ToolRegistry:
    """Tools by name. Names are unique: the model addresses a tool by its name alone."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"A tool named {tool.name!r} is already registered.")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def all(self) -> list[Tool]:
        return [self._tools[name] for name in self.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)


def build_registry(extra_modules: str | Iterable[str] = ()) -> ToolRegistry:
    """A new registry with the built-in tools and every tool of ``extra_modules`` (dotted paths).

    Raises tools.loader.ToolModuleError naming the module that cannot be imported or clashes.
    """
    from tools.loader import load_tool_modules  # the loader registers into a ToolRegistry: import it late

    registry = ToolRegistry()
    load_tool_modules(BUILTIN_MODULES, registry)
    load_tool_modules(extra_modules, registry)
    return registry


@cache
def default_registry(extra_modules: tuple[str, ...] = ()) -> ToolRegistry:
    """The built-ins plus the tools of ``extra_modules`` (the app passes AGENTWEB_TOOL_MODULES), built once per set
    of modules and shared.

    Callers that want their own set make a new ToolRegistry or call build_registry().
    """
    return build_registry(extra_modules)
