"""Django's secret key when DJANGO_SECRET_KEY is not set: made once, at random, and kept in a file.

`make run` on a fresh clone then runs with debug off and a key nobody else knows, and keeps it across restarts
(sessions and the secrets encrypted at rest with a key derived from it stay valid). The default file,
`.secret_key` in the project, is git-ignored. A deployment on several machines sets DJANGO_SECRET_KEY instead,
so that all of them share one key.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def secret_key_from_file(path: Path) -> str:
    """The key kept in `path`; the first call makes it (readable by its owner only)."""
    if not path.exists():
        try:
            create_key_file(path)
        except OSError as error:
            raise ImproperlyConfigured(
                f"DJANGO_SECRET_KEY is not set and no key could be kept in {path} ({error.strerror or error}): "
                "set DJANGO_SECRET_KEY, or DJANGO_SECRET_KEY_FILE to a file the app may create."
            ) from None
    key = path.read_text().strip()
    if not key:
        raise ImproperlyConfigured(f"{path} is empty: delete it to have a new key made, or set DJANGO_SECRET_KEY.")
    return key


def create_key_file(path: Path) -> None:
    # Written whole into a private temporary file, then linked into place: of several processes starting at once
    # (Daphne and a worker), the first link wins and every process reads that one key, never a half-written file.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as file:
            file.write(secrets.token_urlsafe(50) + "\n")
        with contextlib.suppress(FileExistsError):  # another process made it first: its key is the key
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
