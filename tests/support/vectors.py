"""The shared conformance vectors: recorded streams and expected results from other projects, kept in
../shared/vectors beside the clone (not in it). A clone without them runs every other test; the tests over the
vectors skip, saying where the vectors were looked for. The project's own tests cover every provider and parser
without them (tests/providers/test_openai.py, test_anthropic.py, test_ollama.py, protocols/test_hermes.py, ...).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

DIRECTORY = Path(__file__).resolve().parents[2].parent / "shared" / "vectors"

__all__ = ["DIRECTORY", "cases", "find", "load", "missing_reason", "require"]


def missing_reason(name: str | None = None) -> str | None:
    """Why the vectors (of file ``name``) cannot be read, or None when they can."""
    path = DIRECTORY / name if name and DIRECTORY.is_dir() else DIRECTORY
    if path.exists():
        return None
    return (
        f"the shared conformance vectors are not here: {path} does not exist (they live in ../shared/vectors beside "
        "the clone; the project's own tests cover the same code without them)"
    )


def load(*names: str) -> list[dict[str, Any]]:
    """Every vector of the files ``names``, in order; [] when a file is not there."""
    if any(missing_reason(name) for name in names):
        return []
    return [vector for name in names for vector in json.loads((DIRECTORY / name).read_text(encoding="utf-8"))]


def cases(*names: str) -> list:
    """The vectors of ``names`` as parameters of a test, each with its id; when the files are not there, one case
    that skips with the reason."""
    reasons = [reason for name in names if (reason := missing_reason(name))]
    if reasons:
        return [pytest.param(None, id="vectors-missing", marks=pytest.mark.skip(reason=reasons[0]))]
    return [pytest.param(vector, id=vector["id"]) for vector in load(*names)]


def require(*names: str) -> None:
    """Skip the calling test when the vectors (of ``names``) are not there."""
    for name in names or (None,):
        reason = missing_reason(name)
        if reason:
            pytest.skip(reason)


def find(name: str, vector_id: str) -> dict[str, Any]:
    """One vector of file ``name`` by its id; skips the calling test when the file is not there."""
    require(name)
    return next(vector for vector in load(name) if vector["id"] == vector_id)
