"""A clone with no ../shared beside it (the conformance vectors live there, outside the repository) still runs
its tests: nothing fails at collection, and the tests over the vectors skip, saying why."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", "*.sqlite3*", "*.log", "tmp"
)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the working tree in a directory whose parent holds no `shared`."""
    copy = tmp_path_factory.mktemp("alone") / "agentweb"
    shutil.copytree(ROOT, copy, ignore=NOT_COPIED)
    assert not (copy.parent / "shared").exists()
    return copy


def pytest_in(clone: Path, *args: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AGENTWEB_", "DJANGO_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_every_test_file_is_collected(clone):
    result = pytest_in(clone, "--collect-only", "-q")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "error" not in result.stdout.lower().splitlines()[-1]


def test_the_tests_over_the_vectors_skip_naming_where_they_were_looked_for(clone):
    result = pytest_in(clone, "-q", "-rs", "tests/providers/test_sse.py", "tests/providers/protocols/test_vectors.py")
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"the shared conformance vectors are not here: {clone.parent / 'shared' / 'vectors'}" in result.stdout
