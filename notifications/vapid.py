"""Web Push's VAPID key pair (RFC 8292): the private key signs each push's Authorization header, the public key is
what a browser subscribes with (its applicationServerKey).

Kept like the secret key (agentweb/keyfile.py): AGENTWEB_VAPID_PRIVATE_KEY (PEM) when set, else made once at random
on first use and kept in AGENTWEB_VAPID_KEY_FILE, readable by its owner only. Changing the key ends every browser's
subscription (they were made for the old public key): keep the file."""

from __future__ import annotations

import base64
import contextlib
import os
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def private_pem() -> bytes:
    """The private key, PEM (PKCS#8)."""
    if settings.AGENTWEB_VAPID_PRIVATE_KEY:
        return settings.AGENTWEB_VAPID_PRIVATE_KEY.replace("\\n", "\n").encode()
    path = Path(settings.AGENTWEB_VAPID_KEY_FILE)
    if not path.exists():
        try:
            _create_key_file(path)
        except OSError as error:
            raise ImproperlyConfigured(
                f"No VAPID key could be kept in {path} ({error.strerror or error}): set AGENTWEB_VAPID_PRIVATE_KEY, "
                "or AGENTWEB_VAPID_KEY_FILE to a file the app may create."
            ) from None
    pem = path.read_bytes()
    if not pem.strip():
        raise ImproperlyConfigured(f"{path} is empty: delete it to have a new key made (browsers subscribe again).")
    return pem


def public_key() -> str:
    """The public key as a browser's PushManager.subscribe takes it: the uncompressed point, base64url."""
    key = serialization.load_pem_private_key(private_pem(), password=None)
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(point).rstrip(b"=").decode()


def _create_key_file(path: Path) -> None:
    # As agentweb/keyfile.py: written whole into a private temporary file, then linked into place, so that of
    # several processes starting at once the first link wins and all read that one key.
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(pem)
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
