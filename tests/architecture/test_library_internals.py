"""No underscore attribute of another library is read or written outside the adapters (issue 37, "Must hold").

The adapters (agentweb/adapters/, delivery/adapters/; docs/architecture.md lists them) are the only modules of the
app that may touch a library's internals: each is pinned and has a contract test that fails, naming the internal,
when the library changes it. Anywhere else such a reach-in is one nobody would recognise at the next upgrade. How
one is found: tests/architecture/library_internals.py. The checker is tested here too, on planted reach-ins.
"""

from __future__ import annotations

import ast
import importlib
import textwrap
import types

import pytest

from tests.architecture.library_internals import own_names, reaches
from tests.architecture.source import ROOT, app_modules

#: The adapters: every module of these packages may reach into the library it is named for.
ADAPTERS = ("agentweb.adapters", "delivery.adapters")


def is_adapter(name: str) -> bool:
    return any(name == package or name.startswith(package + ".") for package in ADAPTERS)


def class_getter(module_name: str):
    def class_of(name: str) -> type | None:
        module = importlib.import_module(module_name)
        found = getattr(module, name, None)
        return found if isinstance(found, type) else None

    return class_of


def test_no_module_but_the_adapters_reaches_into_a_librarys_internals():
    modules = app_modules()
    own = own_names(module.tree for module in modules)
    found = [
        str(reach)
        for module in modules
        if not is_adapter(module.name)
        for reach in reaches(module.name, module.tree, own, class_getter(module.name))
    ]
    assert found == [], "move these into the library's adapter (agentweb/adapters/ or delivery/adapters/):\n" + (
        "\n".join(found)
    )


def test_the_adapters_are_one_module_per_library_each_with_its_contract_test():
    names = sorted(module.name for module in app_modules() if is_adapter(module.name) and not module.is_package)
    libraries = [name.rsplit(".", 1)[1] for name in names]
    assert len(libraries) == len(set(libraries)), names
    package_of = {name.rsplit(".", 1)[1]: name.split(".")[0] for name in names}
    untested = [
        f"tests/{package}/adapters/test_{library}.py"
        for library, package in package_of.items()
        if not (ROOT / "tests" / package / "adapters" / f"test_{library}.py").exists()
    ]
    assert untested == [], "each adapter's contract test (its library pinned, each internal named) is missing"


# --- the checker, on planted reach-ins --------------------------------------------------------------------------


def planted(source: str) -> list[str]:
    """The reach-ins the checker finds in `source`, run as a module of its own (its classes made for real)."""
    source = textwrap.dedent(source)
    module = types.ModuleType("chat.planted")
    exec(compile(source, "chat/planted.py", "exec"), module.__dict__)
    tree = ast.parse(source)

    def class_of(name: str) -> type | None:
        found = module.__dict__.get(name)
        return found if isinstance(found, type) else None

    own = own_names([tree, *(module.tree for module in app_modules())])
    return [reach.what for reach in reaches("chat.planted", tree, own, class_of)]


def test_the_checker_finds_another_objects_library_attribute_read_or_written():
    found = planted(
        """
        def resolve(scope, user):
            scope["user"]._wrapped = user
            return scope["session"]._session_cache
        """
    )
    assert found == [
        "scope['user']._wrapped: a library's underscore attribute",
        "scope['session']._session_cache: a library's underscore attribute",
    ]


def test_the_checker_finds_a_librarys_attribute_through_getattr_and_a_private_import():
    found = planted(
        """
        from twisted.web.http import _GenericHTTPChannelProtocol

        def buffered(channel):
            return getattr(channel, "_buffer", b"")
        """
    )
    assert found == [
        "from twisted.web.http import _GenericHTTPChannelProtocol: a library's private name",
        "channel._buffer: a library's underscore attribute",
    ]


def test_the_checker_finds_self_reaching_into_a_library_base_and_an_override():
    found = planted(
        """
        from channels.layers import InMemoryChannelLayer
        from twisted.web.http import HTTPChannel

        class Layer(InMemoryChannelLayer):
            def _clean_expired(self):
                super()._clean_expired()

        class Channel(HTTPChannel):
            def busy(self):
                return self._handlingRequest
        """
    )
    assert found == [
        "def _clean_expired: overrides channels.layers.InMemoryChannelLayer._clean_expired",
        "super()._clean_expired: defined by channels.layers.InMemoryChannelLayer",
        "self._handlingRequest: defined by twisted.web.http.HTTPChannel",
    ]


def test_the_checker_finds_a_mixin_reaching_into_the_class_it_is_mixed_into():
    found = planted(
        """
        class ReadsDirectly:
            def dataReceived(self, data):
                self._dataReceived(data)
        """
    )
    assert found == ["self._dataReceived: defined nowhere in the app (a library's)"]


@pytest.mark.parametrize(
    "source",
    [
        # The app's own underscore names, on self or on another object of the app.
        """
        class Counter:
            def __init__(self):
                self._count = 0

            def merge(self, other):
                self._count += other._count
        """,
        # What a library documents as public though it is spelled with an underscore.
        """
        def table(model):
            return model._meta.db_table, model._default_manager
        """,
    ],
)
def test_the_checker_leaves_the_apps_own_and_documented_names_alone(source):
    assert planted(source) == []
