"""What the adapters' contract tests (tests/agentweb/adapters/, tests/delivery/adapters/) check a library with: that
it is installed at its pin (requirements.txt), and that every internal the adapter reads or overrides is still there,
each failure naming the internal and where it was."""

from __future__ import annotations

import inspect
import re
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        found = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^]]*\])?==([^\s#]+)", line)
        if found:
            pins[found[1].lower()] = found[2]
    return pins


def at_its_pin(library: str) -> None:
    """`library` (its distribution's name) is pinned, and installed at its pin."""
    pins = pinned()
    assert library in pins, f"{library} is adapted by agentweb's code: pin it in requirements.txt"
    assert version(library) == pins[library], (
        f"{library} {version(library)} is installed, {pins[library]} pinned: check its adapter's internals against it"
    )


def has_method(cls, name: str, *params: str) -> None:
    member = inspect.getattr_static(cls, name, None)
    assert member is not None, f"{cls.__module__}.{cls.__qualname__}.{name} is gone"
    signature = inspect.signature(getattr(cls, name))
    missing = [p for p in params if p not in signature.parameters]
    assert not missing, f"{cls.__qualname__}.{name}{signature} no longer takes {missing}"


def sets_in_init(cls, *attributes: str) -> None:
    source = inspect.getsource(cls.__init__)
    missing = [a for a in attributes if f"self.{a} =" not in source and f"self.{a}:" not in source]
    assert not missing, f"{cls.__qualname__}.__init__ no longer sets {missing}"


def calls(cls, name: str, *called: str) -> None:
    source = inspect.getsource(getattr(cls, name))
    missing = [c for c in called if c not in source]
    assert not missing, f"{cls.__qualname__}.{name} no longer calls {missing}"


def in_source(cls, *names: str) -> None:
    """Each of `names` (`self.x`) appears in the source of `cls`'s module."""
    source = inspect.getsource(inspect.getmodule(cls))
    missing = [name for name in names if name not in source]
    assert not missing, f"{cls.__module__}.{cls.__qualname__} no longer has {missing}"
