"""The app's own modules, parsed: what the architecture tests read (tests/architecture/).

Only the source is read, nothing is imported, so a test here sees a function-local import as well as one at the
top, and a module that cannot be imported without the rest of the app is read all the same.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The app's packages (the repository's top-level packages but tests/ and bench/): agentweb/ is the project package.
PACKAGES = (
    "agentweb",
    "delivery",
    "chat",
    "agents",
    "tools",
    "providers",
    "attachments",
    "sharing",
    "mcpservers",
    "modelconfig",
    "api",
    "hooks",
    "inbox",
    "notifications",
    "schedules",
    "sso",
    "mcpconnect",
    "audit",
)


@dataclass(frozen=True)
class Module:
    name: str  # dotted: "chat.runs.start"; a package's __init__.py is the package's name
    path: Path
    tree: ast.Module

    @property
    def package(self) -> str:
        return self.name.split(".")[0]

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    def where(self, node: ast.AST) -> str:
        return f"{self.path.relative_to(ROOT)}:{node.lineno}"


@functools.cache
def app_modules() -> tuple[Module, ...]:
    """Every module of the app's packages, migrations left out (Django writes them; they import only Django)."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.relative_to(ROOT).parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append(Module(".".join(parts), path, ast.parse(path.read_text(), filename=str(path))))
    return tuple(found)


def imported_name(module: Module, node: ast.ImportFrom) -> str:
    """The absolute name of the module a `from … import …` reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))
