"""No import cycle between the app's packages, and no function-local import that hides one.

docs/architecture.md's layers import only the layers below them. A package that imports one that imports it back
has no place in that order: neither can be understood, tested or moved without the other, and the import at the
top of a module fails as soon as the two are loaded in the wrong order, which is what a function-local import is
then written to avoid. Such an import hides the cycle from the reader; it does not remove it. So both are counted
here: every import statement of the app's modules, at the top or inside a function, read from the source.

A cycle that cannot be removed yet is allowed below, import by import, each with the reason it is still there; an
entry whose import is gone, or no longer closes a cycle, fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import itertools
from collections import defaultdict
from dataclasses import dataclass

from tests.architecture.source import PACKAGES, ROOT, Module, app_modules, imported_name

COORDINATORS = "delivery component — coordinator's"

#: "importer module -> imported module": why the import stays although it closes a cycle between their packages.
ALLOWED = {
    # The project package's server and ASGI entry start the apps' parts, and the apps import the project package for
    # the channel layer's fast paths and the pieces they share: the delivery component (issue 37 item 1) takes
    # both sides apart.
    "agentweb.asgi -> chat.routing": COORDINATORS,
    "agentweb.asgi -> chat.runs": COORDINATORS,
    "agentweb.asgi -> chat.worker": COORDINATORS,
    "agentweb.serve -> chat.runs": COORDINATORS,
    "agentweb.serve -> mcpservers.lifetime": COORDINATORS,
    "agentweb.socket_auth -> chat.signed_in": COORDINATORS,
}


@dataclass(frozen=True)
class Import:
    importer: Module
    imported: str  # the dotted name of the module it reads
    node: ast.stmt
    local: bool  # inside a function: made when the function runs, not when the module loads

    @property
    def key(self) -> str:
        return f"{self.importer.name} -> {self.imported}"

    @property
    def source(self) -> str:
        return self.importer.package

    @property
    def target(self) -> str:
        return self.imported.split(".")[0]

    def __str__(self) -> str:
        kind = "inside a function" if self.local else "at module level"
        return f"{self.importer.where(self.node)} imports {self.imported} ({kind})"


def imports_of(module: Module) -> list[Import]:
    """Its imports, in order; `from package import module` is an import of that module."""
    found: list[Import] = []
    known = {other.name for other in app_modules()}

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend(Import(module, alias.name, child, local) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = imported_name(module, child)
                names = dict.fromkeys(
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in child.names
                )
                found.extend(Import(module, name, child, local) for name in names)
            else:
                visit(child, local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(module.tree, False)
    return found


def between_packages() -> list[Import]:
    """Every import of one app package's module by another package's."""
    return [
        found
        for module in app_modules()
        for found in imports_of(module)
        if found.target in PACKAGES and found.target != found.source
    ]


def path(edges: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """The shortest chain of packages from `start` to `goal` (both included), None when there is none."""
    came_from: dict[str, str | None] = {start: None}
    todo = [start]
    while todo:
        following: list[str] = []
        for package in todo:
            for other in sorted(edges[package]):
                if other in came_from:
                    continue
                came_from[other] = package
                if other == goal:
                    chain = [other]
                    while came_from[chain[-1]] is not None:
                        chain.append(came_from[chain[-1]])
                    return chain[::-1]
                following.append(other)
        todo = following
    return None


def reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    return path(edges, start, goal) is not None


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One shortest loop through each import edge that has one, as a chain of packages starting and ending alike."""
    found: dict[frozenset, list[str]] = {}
    for package in sorted(edges):
        for other in sorted(edges[package]):
            back = path(edges, other, package)
            if back is not None:
                loop = [package, *back]
                found.setdefault(frozenset(itertools.pairwise(loop)), loop)
    return list(found.values())


def graph(imports: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for found in imports:
        edges[found.source].add(found.target)
        edges.setdefault(found.target, set())  # every package a node
    return edges


def test_no_package_imports_one_that_imports_it_back():
    counted = [found for found in between_packages() if found.key not in ALLOWED]
    by_edge = defaultdict(list)
    for found in counted:
        by_edge[(found.source, found.target)].append(found)
    problems = []
    for loop in cycles(graph(counted)):
        steps = []
        for edge in itertools.pairwise(loop):
            first, *more = by_edge[edge]
            steps.append(f"{first}" + (f" (and {len(more)} more)" if more else ""))
        problems.append(" → ".join(loop) + ":\n  " + "\n  ".join(steps))
    assert not problems, "Import cycles between the app's packages:\n" + "\n".join(problems)


def test_no_function_local_import_hides_a_cycle():
    """A function-local import of a package that imports the importer's package at module level."""
    imports = between_packages()
    at_top = defaultdict(list)
    for found in imports:
        if not found.local:
            at_top[(found.source, found.target)].append(found)
    problems = []
    for found in imports:
        back = at_top.get((found.target, found.source))
        if found.local and back and found.key not in ALLOWED:
            problems.append(f"{found}, while {back[0]}")
    assert not problems, "Function-local imports that hide a cycle:\n" + "\n".join(problems)


def test_every_allowed_import_is_there_and_still_closes_a_cycle():
    imports = between_packages()
    edges = graph(imports)
    present = {found.key: found for found in imports}
    stale = [key for key in ALLOWED if key not in present]
    healed = [
        key for key, found in present.items() if key in ALLOWED and not reaches(edges, found.target, found.source)
    ]
    assert not stale, f"Allowed imports no longer made (remove them from ALLOWED): {stale}"
    assert not healed, f"Allowed imports that no longer close a cycle (remove them from ALLOWED): {healed}"


def test_it_reads_imports_at_the_top_and_inside_functions_and_finds_loops():
    source = "from . import models\nimport chat.store\n\ndef late():\n    from sharing.services import list_links\n"
    module = Module("chat.views", ROOT / "chat" / "views.py", ast.parse(source))  # read from the text above
    assert [(found.imported, found.local) for found in imports_of(module)] == [
        ("chat.models", False),
        ("chat.store", False),
        ("sharing.services", True),
    ]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
