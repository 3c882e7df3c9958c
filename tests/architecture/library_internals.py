"""Where the app reads or writes another library's underscore attributes (its internals), found in the source.

What counts as a reach-in, in a module of the app:

- `x._name` read, written or deleted (and `getattr`/`setattr`/`hasattr`/`delattr(x, "_name")`), where `x` is not
  `self`, `cls` or `super()`, unless `_name` is one the app defines itself or one the library documents as its public
  API (DOCUMENTED: Django's `Model._meta`, namedtuple's `_replace`…);
- `self._name` / `cls._name` / `super()._name` (and `def _name` in a class body: an override) in a class whose bases
  include a library's class that defines `_name` (in its namespace, or as `self._name` in its source); and in any
  class, `self._name` for a name the app defines nowhere (a mixin reaching into the class it is mixed into);
- `from library import _name`.

"The app defines" means: some module of the app binds the name (`def _name`, `class _name`, `_name = …`,
`self._name = …`, a class attribute; not `other._name = …`). Pragmatic, not a proof: it is the rule
docs/architecture.md states ("no underscore attribute of another library outside the adapters"), checked the way a
reviewer would.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tests.architecture.source import PACKAGES

#: Underscore names a library documents as public API.
DOCUMENTED = {
    # Django: "Model _meta API", "Managers" (default and base managers), the model instance's `_state` ("Model
    # instance reference": its `adding` and `db`).
    "_meta",
    "_state",
    "_default_manager",
    "_base_manager",
    # collections.namedtuple / typing.NamedTuple.
    "_replace",
    "_asdict",
    "_fields",
    "_make",
    # os._exit: "the standard way to exit is sys.exit(n); _exit() should normally only be used in the child process
    # after a fork()" (documented).
    "_exit",
}

ACCESSORS = {"getattr", "setattr", "hasattr", "delattr"}


def is_private(name: str) -> bool:
    return len(name) > 1 and name.startswith("_") and not name.startswith("__")


def own_names(trees: Iterable[ast.AST]) -> frozenset[str]:
    """Every underscore name some module of the app binds."""
    found: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and is_self(node.value):
                found.add(node.attr)  # (set on another object, it is that object's: not a definition)
            elif isinstance(node, ast.alias) and node.asname:
                found.add(node.asname)
    return frozenset(name for name in found if is_private(name))


def is_library_class(klass: type) -> bool:
    return klass.__module__.split(".")[0] not in (*PACKAGES, "builtins") and not klass.__module__.startswith("tests")


@functools.cache
def library_defines(klass: type, name: str) -> bool:
    """Whether a library's class defines `name` itself: in its namespace, or set on `self` in its source."""
    if name in vars(klass):
        return True
    try:
        source = inspect.getsource(klass)
    except (OSError, TypeError):
        return False
    return f"self.{name}" in source or f"cls.{name}" in source


def library_bases(klass: type | None) -> list[type]:
    return [base for base in getattr(klass, "__mro__", ())[1:] if is_library_class(base)]


@dataclass(frozen=True)
class Reach:
    where: str  # module:line
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def is_self(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def reaches(name: str, tree: ast.Module, own: frozenset[str], class_of: Callable[[str], type | None]) -> list[Reach]:
    """The reach-ins of module `name` (its source parsed as `tree`); `class_of(qualified name)` gives a top-level
    class of the module as imported (None if it cannot be had), to see what its libraries' bases define."""
    found: list[Reach] = []

    def note(node: ast.AST, what: str) -> None:
        found.append(Reach(f"{name}:{node.lineno}", what))

    def attribute(node: ast.AST, owner: ast.AST, attr: str, bases: list[type]) -> None:
        if not is_private(attr):
            return
        if attr in DOCUMENTED:
            return
        if is_self(owner):
            defining = [base for base in bases if library_defines(base, attr)]
            if defining:
                note(node, f"{ast.unparse(owner)}.{attr}: defined by {qualified(defining[0])}")
            elif attr not in own:
                note(node, f"{ast.unparse(owner)}.{attr}: defined nowhere in the app (a library's)")
        elif attr not in own:
            note(node, f"{ast.unparse(owner)}.{attr}: a library's underscore attribute")

    def visit(node: ast.AST, bases: list[type], top: bool) -> None:
        if isinstance(node, ast.ClassDef):
            inner = library_bases(class_of(node.name) if top else None)
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and is_private(item.name):
                    defining = [base for base in inner if library_defines(base, item.name)]
                    if defining:
                        note(item, f"def {item.name}: overrides {qualified(defining[0])}.{item.name}")
            for child in ast.iter_child_nodes(node):
                visit(child, inner, False)
            return
        if isinstance(node, ast.Attribute):
            attribute(node, node.value, node.attr, bases)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ACCESSORS:
            args = node.args
            if len(args) >= 2 and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
                attribute(node, args[0], args[1].value, bases)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] not in PACKAGES:
            for alias in node.names:
                if is_private(alias.name):
                    note(node, f"from {node.module} import {alias.name}: a library's private name")
        for child in ast.iter_child_nodes(node):
            visit(child, bases, isinstance(node, ast.Module))

    visit(tree, [], False)
    return found


def qualified(klass: type) -> str:
    return f"{klass.__module__}.{klass.__qualname__}"
