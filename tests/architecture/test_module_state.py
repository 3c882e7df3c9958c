"""The app's module-level mutable state, found in the source, and the few pieces of it allowed to stay.

State a module holds lives as long as the process and is shared by everything in it: every test, every event loop,
every thread. A reader cannot see who changes it, a test has to know to reset it, and two of them in one process
(a test's server beside the test) share it unasked. Per-process state belongs to an object whose life is the app's:
an app's AppConfig makes it in ready() (mcpservers/apps.py, attachments/apps.py), or it is an attribute of the
object whose work it serves (chat/worker.py's RunWorker).

What is counted, in every module of the app's packages:

- a module-level name bound to a mutable container (a dict, list or set display, or dict(), deque(), defaultdict(),
  WeakValueDictionary()…), unless its name is a constant's (UPPER_CASE) and nothing in the app changes it;
- a module-level name bound to an object made by a call (an instance: a registry, a cache, a counter, a lock), unless
  the call makes a value (CONSTANT_CALLS: a compiled regex, a frozenset, a timeout, a sentinel…);
- a module-level name that a function rebinds (`global`) or another module sets (`module.NAME = …`);
- a module-level function that keeps its results (functools.cache, lru_cache);
- a class-level mutable container that the class's code or another module changes in place (shared by every
  instance).

Each one found must be in STATE (kept per process, for the reason given) or READ_ONLY (made once at import and never
changed after: not state, but an object all the same); an entry nothing matches any more fails too, so both lists
only shrink. Run with `-s` to see the list.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tests.architecture.source import ROOT, Module, app_modules

COORDINATORS = "issue 37: still to move to an owner with the app's lifetime"

#: Per-process state that stays, each with why (and a comment at its definition, in the files that are ours to edit).
STATE = {
    # Still to move (issue 37): the run layer's per-loop tasks, the sockets' batched reads, the ASGI application.
    "agentweb.asgi.django_http_app": COORDINATORS,
    "agentweb.asgi.application": COORDINATORS,
    "chat.signed_in.read_signed_in_thread": COORDINATORS,
    "chat.signed_in.read_signed_in_user": COORDINATORS,
    # providers/openai.py is being rewritten in another branch: these belong on its client's per-server state.
    "providers.openai.RESPONSE_FORMAT_REFUSED": "providers/openai.py's rewrite (another branch)",
    "providers.openai.USAGE_OPTION_REFUSED": "providers/openai.py's rewrite (another branch)",
    # Per process by nature, each with nothing of the app to hang it on.
    "providers.client._clients": "one shared HTTP client per event loop (its connections are the loop's); "
    "providers/ is plain Python, with no app of its own",
    "tools.builtin.fetch_url.ALLOWED_HOSTS_PROVIDER": "the hook the tools app sets once as it starts (tools/apps.py), "
    "so that the plain-Python tool reads the admin's allow-list",
    "tools.pool.TOOL_THREADS": "the process's threads for sync tools: their number is the process's limit (sized by "
    "tools/apps.py); the plain-Python executor has no app to ask",
    "tools.settings_cache.SETTINGS_CACHE": "the process's one settings cache, by design (docs/architecture.md): "
    "every app's answers under one stamp",
}

#: Objects made once at import and only read after: not state, listed so that a new object is looked at.
READ_ONLY = {
    "chat.starters.NEEDED": "a constant: the tools the suggestion tables' entries need, worked out from them at import",
    "inbox.queries._COUNT_SQL": "a constant: the count's statement, its table names from the models at import",
    "agentweb.secretbox._box": "memo of a pure function: the box of a set of keys",
    "chat.queries._history_start_sql": "memo of a pure function: the history's start statement, per database vendor",
    "delivery.log._before_number": "memo of a pure function: the start of an event's text, the same for a stream",
    "chat.queries._grants_groups_and_stamp_sql": "memo of a pure function: a statement's SQL per database vendor",
    "chat.queries._thread_for_turn_sql": "memo of a pure function: a statement's SQL per database vendor",
    "chat.queries._stamp_and_defaults_sql": "memo of a pure function: a statement's SQL per database vendor",
    "chat.templatetags.usage_money.register": "Django's template library, filled at import by its decorators",
    "chat.templatetags.sidebar_rows.register": "Django's template library, filled at import by its decorators",
    "api.run_api.api": "django-ninja's API, its routes registered at import by its decorators",
    "mcpconnect.signals.mcp_connection_changed": "a Django signal: its receivers are connected as the apps start "
    "(audit/receivers.py), as Django's own signals are",
    "api.templatetags.api_keys.register": "Django's template library, filled at import by its decorators",
    "sharing.markdown._PARSER": "markdown-it configured once, then only asked to render",
    "sharing.templatetags.sharing.register": "Django's template library, filled at import by its decorators",
    "notifications.templatetags.notifications.register": "Django's template library, filled at import by its "
    "decorators",
    "tools.elicitation.FORMAT_CHECKER": "jsonschema's format checker, configured once",
    "tools.registry.default_registry": "memo: the registry of a set of tool modules (building it imports them)",
}

#: Calls whose result is a value, not state (by the name the call is written with).
CONSTANT_CALLS = {
    "Decimal",
    "TypeVar",
    "ParamSpec",
    "Field",
    "timedelta",
    "Path",
    "RegexValidator",
    "database_sync_to_async",
    "frozenset",
    "gettext_noop",  # the text itself, marked for the catalogues
    "gettext_lazy",  # a lazy, immutable text
    "httpx.Limits",
    "httpx.Timeout",
    "httpx2.Timeout",
    "json.dumps",
    "logging.getLogger",
    "object",
    "re.compile",
    "tuple",
    "types.Implementation",
}

MUTABLE_CONSTRUCTORS = {
    "dict",
    "list",
    "set",
    "bytearray",
    "deque",
    "defaultdict",
    "OrderedDict",
    "Counter",
    "ChainMap",
    "WeakValueDictionary",
    "WeakKeyDictionary",
    "WeakSet",
}
MUTATING_METHODS = {
    "add",
    "append",
    "appendleft",
    "clear",
    "discard",
    "extend",
    "insert",
    "pop",
    "popitem",
    "popleft",
    "remove",
    "setdefault",
    "update",
}
MEMO_DECORATORS = {"cache", "lru_cache", "functools.cache", "functools.lru_cache", "cached"}
#: Django's and Channels' conventions for module-level names, read by the framework.
FRAMEWORK_NAMES = {"__all__", "urlpatterns", "app_name", "websocket_urlpatterns"}
#: Django's settings are configuration, read-only by contract (django.conf.settings), and read once at start.
SETTINGS_MODULE = "agentweb.settings"


@dataclass(frozen=True)
class Found:
    key: str  # "package.module.name" (a class attribute: "package.module.Class.name")
    where: str  # file:line of its definition
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.key} ({self.what})"


def is_constant_name(name: str) -> bool:
    return name.lstrip("_").isupper()


def callee(call: ast.Call) -> str:
    return ast.unparse(call.func)


def is_mutable_container(value: ast.expr) -> bool:
    if isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp):
        return True
    return isinstance(value, ast.Call) and callee(value).split(".")[-1] in MUTABLE_CONSTRUCTORS


def module_bindings(module: Module):
    """(name, value, node) of every module-level assignment, also those inside a module-level if / try / with."""

    def visit(body):
        for node in body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        yield target.id, node.value, node
            elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
                yield node.target.id, node.value, node
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for block in ("body", "orelse", "finalbody"):
                    yield from visit(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    yield from visit(handler.body)

    yield from visit(module.tree.body)


def changed_nodes(tree: ast.AST):
    """What `tree` changes in place: the `x` of `x.add(…)`, `x[k] = …`, `del x[k]`, `x += …`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING_METHODS:
            yield node.func.value
        targets = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                yield target.value
            if isinstance(node, ast.AugAssign):
                yield target


def changes_in_place(tree: ast.AST, bases: set[str] | None = None) -> set[str]:
    """The names that `tree` changes in place, as a bare name or as an attribute (`module.x`); with `bases`, only
    attributes of those names (`self.x`, `cls.x`, `Class.x`)."""
    names: set[str] = set()
    for node in changed_nodes(tree):
        if isinstance(node, ast.Name) and bases is None:
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and (bases is None or ast.unparse(node.value) in bases):
            names.add(node.attr)
    return names


def changed_attributes(modules: tuple[Module, ...]) -> dict[str, set[str]]:
    """For each name, the attributes of it the modules change in place (`Class.x.add(…)`: "Class" → {"x"}): read
    once for every class, not once per class and module."""
    found: dict[str, set[str]] = {}
    for module in modules:
        for node in changed_nodes(module.tree):
            if isinstance(node, ast.Attribute):
                found.setdefault(ast.unparse(node.value), set()).add(node.attr)
    return found


def changed_in_place(modules: tuple[Module, ...]) -> set[str]:
    """The names the modules change in place anywhere."""
    return {name for module in modules for name in changes_in_place(module.tree)}


def set_from_outside(modules: tuple[Module, ...]) -> set[str]:
    """Attribute names the modules assign on something that is not `self` or `cls` (`fetch_url.PROVIDER = …`)."""
    names = set()
    for module in modules:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Assign | ast.AugAssign):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id not in ("self", "cls")
                    ):
                        names.add(target.attr)
    return names


def rebound_by_functions(module: Module) -> set[str]:
    return {name for node in ast.walk(module.tree) if isinstance(node, ast.Global) for name in node.names}


def module_state(modules: tuple[Module, ...] | None = None) -> list[Found]:
    """The state of `modules` (the app's, unless given)."""
    modules = app_modules() if modules is None else modules
    changed, from_outside = changed_in_place(modules), set_from_outside(modules)
    attributes = changed_attributes(modules)
    found: list[Found] = []
    for module in modules:
        if module.name == SETTINGS_MODULE:
            continue
        rebound = rebound_by_functions(module)
        for name, value, node in module_bindings(module):
            key, where = f"{module.name}.{name}", module.where(node)
            if name in FRAMEWORK_NAMES:
                continue
            if name in rebound:
                found.append(Found(key, where, "rebound by a function's `global`"))
            elif name in from_outside and is_constant_name(name) and isinstance(value, ast.Constant):
                found.append(Found(key, where, "set from another module"))
            elif is_mutable_container(value):
                if not is_constant_name(name):
                    found.append(Found(key, where, "a mutable container"))
                elif name in changed:
                    found.append(Found(key, where, "a mutable container, changed in place"))
            elif isinstance(value, ast.Call) and callee(value) not in CONSTANT_CALLS:
                found.append(Found(key, where, f"made by {callee(value)}()"))
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                memo = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
                if set(memo) & MEMO_DECORATORS:
                    found.append(Found(f"{module.name}.{node.name}", module.where(node), "keeps its results"))
            elif isinstance(node, ast.ClassDef):
                found.extend(class_state(module, node, attributes))
    return found


def class_state(module: Module, node: ast.ClassDef, attributes: dict[str, set[str]]) -> list[Found]:
    """Class-level mutable containers that the class's methods (through `self`, `cls` or the class's name) or
    another module (through the class's name) change in place, with no instance attribute of the same name made to
    shadow them: every instance shares them."""
    own = {
        target.attr
        for child in ast.walk(node)
        if isinstance(child, ast.Assign)
        for target in child.targets
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
    }
    changed = changes_in_place(node, {"self", "cls", node.name}) | attributes.get(node.name, set())
    found = []
    for child in node.body:
        if isinstance(child, ast.Assign | ast.AnnAssign) and child.value is not None:
            targets = child.targets if isinstance(child, ast.Assign) else [child.target]
            for target in targets:
                if (
                    isinstance(target, ast.Name)
                    and is_mutable_container(child.value)
                    and target.id in changed
                    and target.id not in own
                ):
                    key = f"{module.name}.{node.name}.{target.id}"
                    found.append(Found(key, module.where(child), "a class-level container, changed in place"))
    return found


def test_module_level_state_is_only_what_is_allowed():
    found = module_state()
    print("\nModule-level state of the app:")
    for item in found:
        reason = STATE.get(item.key) or (
            f"read-only: {READ_ONLY[item.key]}" if item.key in READ_ONLY else "NOT ALLOWED"
        )
        print(f"  {item}: {reason}")
    unexpected = [str(item) for item in found if item.key not in STATE and item.key not in READ_ONLY]
    assert not unexpected, (
        "Module-level state: give it an owner with the app's lifetime (an AppConfig, the object it serves), or, "
        "when it must stay per process, an entry in STATE with the reason and a comment at its definition:\n"
        + "\n".join(unexpected)
    )


def test_every_allowed_entry_is_still_there():
    keys = {item.key for item in module_state()}
    stale = sorted((set(STATE) | set(READ_ONLY)) - keys)
    assert not stale, f"No longer found (remove them from the lists): {stale}"


def test_the_state_that_stays_is_a_handful_besides_the_coordinators():
    """Issue 37's aim: at most a handful of per-process state left in modules, each with its reason. The delivery
    component's is counted apart: it goes with that component's rewrite."""
    ours = [key for key, reason in STATE.items() if reason != COORDINATORS]
    assert len(ours) <= 6, ours


EXAMPLE = """
import functools
import re
import threading
from collections import defaultdict

LIMITS = {"a": 1}  # a table nothing changes: a constant
NAMES = frozenset({"a"})
PATTERN = re.compile("x")
SEEN = set()
_by_loop = {}
counts = defaultdict(int)
_lock = threading.Lock()
_made = None
HOOK = None


def note(name):
    global _made
    _made = name
    SEEN.add(name)


@functools.lru_cache(maxsize=8)
def cached(value):
    return value


class Registry:
    entries = []  # shared by every instance: changed through self below
    fields = ["a"]  # declared, never changed

    def add(self, entry):
        self.entries.append(entry)


class Own:
    items = []

    def __init__(self):
        self.items = []  # each instance's own

    def add(self, item):
        self.items.append(item)
"""

ELSEWHERE = """
import example

example.HOOK = print
"""


def test_it_finds_each_kind_of_state_and_passes_constants_by():
    modules = tuple(
        Module(name, ROOT / f"{name}.py", ast.parse(text))  # read from the text: no such file
        for name, text in (("example", EXAMPLE), ("elsewhere", ELSEWHERE))
    )
    found = {item.key: item.what for item in module_state(modules)}
    assert found == {
        "example.SEEN": "a mutable container, changed in place",
        "example._by_loop": "a mutable container",
        "example.counts": "a mutable container",
        "example._lock": "made by threading.Lock()",
        "example._made": "rebound by a function's `global`",
        "example.HOOK": "set from another module",
        "example.cached": "keeps its results",
        "example.Registry.entries": "a class-level container, changed in place",
    }
