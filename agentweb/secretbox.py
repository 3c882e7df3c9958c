"""Secrets at rest: model API keys and HTTP-tool header values, encrypted with Fernet before they reach the
database (docs/deploy.md, "Secrets at rest").

Keys come from ``AGENTWEB_SECRET_KEYS`` (settings): comma-separated Fernet keys; the first encrypts, every
one decrypts, so a key is rotated by putting the new one first, running ``manage.py rotate_secrets`` and then
dropping the old one. Without it, one key is derived from Django's ``SECRET_KEY`` (HKDF-SHA256): changing
``DJANGO_SECRET_KEY`` then makes the stored secrets unreadable. That derived key is also tried last when
``AGENTWEB_SECRET_KEYS`` is set, so turning the variable on does not lock out what was written before it.

A stored value is ``fernet:v1:<token>``. A value without the prefix is plaintext from before encryption: it is
read as it is and encrypted by the migrations (or the next save, or rotate_secrets).

Plain Python: only ``box()`` reads Django's settings, and only when called. Nothing here logs or puts a key,
a token or a plaintext into an exception message.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = [
    "ENV_VARIABLE",
    "PREFIX",
    "InvalidSecretKeys",
    "SecretBox",
    "UnreadableSecret",
    "UnreadableSecretError",
    "box",
    "derive_key",
    "is_encrypted",
    "parse_keys",
]

ENV_VARIABLE = "AGENTWEB_SECRET_KEYS"
#: What a stored value starts with when it is encrypted; "v1" names this scheme (Fernet, keys as above).
PREFIX = "fernet:v1:"
# HKDF's salt and info: fixed, so the same SECRET_KEY always gives the same key; never change them.
_HKDF_SALT = b"agentweb.secretbox"
_HKDF_INFO = b"agentweb secrets at rest v1"
# The public key `make run` used as SECRET_KEY until it made one of its own (agentweb/keyfile.py). What was
# encrypted with the key derived from it is still read (it was never secret from anyone holding the database),
# never written: the next save, or `manage.py rotate_secrets`, encrypts it with the current key.
FORMER_DEVELOPMENT_SECRET_KEY = "django-insecure-agentweb-development-only"


class InvalidSecretKeys(ValueError):
    """AGENTWEB_SECRET_KEYS holds something that is not a Fernet key (the message never quotes it)."""


class UnreadableSecretError(Exception):
    """A stored secret that none of the keys decrypts: the key that wrote it is not configured."""


class UnreadableSecret:
    """The Python value of an encrypted field whose token none of the keys decrypts.

    It keeps the token, so saving the row writes the token back unchanged (and the secret comes back when the
    right key is configured again). It is truthy ("a secret is stored") and never a usable string: code that
    needs the plaintext checks for it and reports ``problem()``.
    """

    __slots__ = ("token",)

    def __init__(self, token: str):
        self.token = token

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnreadableSecret) and other.token == self.token

    def __hash__(self) -> int:
        return hash(self.token)

    def __repr__(self) -> str:
        return "<UnreadableSecret>"

    __str__ = __repr__

    @staticmethod
    def problem(what: str) -> str:
        """The message for a person: ``what`` is e.g. "The API key of model configuration 'Work'"."""
        return (
            f"{what} cannot be decrypted with {ENV_VARIABLE}: the key that encrypted it is not configured "
            f"(were {ENV_VARIABLE} or DJANGO_SECRET_KEY changed?). Configure that key again, or enter the "
            "secret again in the admin."
        )


def is_encrypted(stored: str | None) -> bool:
    return isinstance(stored, str) and stored.startswith(PREFIX)


def derive_key(secret_key: str) -> bytes:
    """The Fernet key derived from Django's SECRET_KEY (HKDF-SHA256, 32 bytes, fixed salt and info)."""
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=_HKDF_SALT, info=_HKDF_INFO).derive(secret_key.encode())
    return base64.urlsafe_b64encode(raw)


def parse_keys(keys: Sequence[str] | str) -> list[bytes]:
    """Fernet keys from a list or a comma-separated string; InvalidSecretKeys names a bad one by position."""
    items = keys.split(",") if isinstance(keys, str) else list(keys)
    parsed: list[bytes] = []
    for position, item in enumerate((item.strip() for item in items if item.strip()), start=1):
        try:
            if len(base64.urlsafe_b64decode(item.encode("ascii"))) != 32:
                raise ValueError
        except (ValueError, binascii.Error, UnicodeEncodeError):
            raise InvalidSecretKeys(
                f"Key {position} of {ENV_VARIABLE} is not a Fernet key (44 characters of URL-safe base64). "
                'Generate one with: python -c "from cryptography.fernet import Fernet; '
                'print(Fernet.generate_key().decode())"'
            ) from None
        parsed.append(item.encode("ascii"))
    return parsed


class SecretBox:
    """Encrypts with the first key, decrypts with any of them."""

    def __init__(self, keys: Sequence[bytes]):
        if not keys:
            raise InvalidSecretKeys("A SecretBox needs at least one key.")
        self._fernet = MultiFernet([Fernet(key) for key in keys])

    def encrypt(self, plaintext: str) -> str:
        return PREFIX + self._fernet.encrypt(plaintext.encode()).decode("ascii")

    def decrypt(self, stored: str) -> str:
        """The plaintext of a stored value; a value without the prefix is plaintext already.
        Raises UnreadableSecretError when no key decrypts it."""
        if not is_encrypted(stored):
            return stored
        try:
            return self._fernet.decrypt(stored[len(PREFIX) :].encode("ascii")).decode()
        except (InvalidToken, UnicodeError):
            raise UnreadableSecretError("No configured key decrypts this secret.") from None

    def reencrypt(self, stored: str) -> str:
        """``stored`` encrypted with the first key (plaintext is encrypted). Raises UnreadableSecretError."""
        return self.encrypt(self.decrypt(stored))


def box() -> SecretBox:
    """The box of the running configuration: settings.AGENTWEB_SECRET_KEYS, then the key derived from
    SECRET_KEY. Raises django's ImproperlyConfigured when AGENTWEB_SECRET_KEYS holds a bad key."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    configured = getattr(settings, "AGENTWEB_SECRET_KEYS", None) or []
    try:
        return _box(tuple(configured), settings.SECRET_KEY)
    except InvalidSecretKeys as exc:
        raise ImproperlyConfigured(str(exc)) from None


@functools.lru_cache(maxsize=8)
def _box(configured: tuple[str, ...], secret_key: str) -> SecretBox:
    keys = parse_keys(configured)
    for derived in (derive_key(secret_key), derive_key(FORMER_DEVELOPMENT_SECRET_KEY)):
        if derived not in keys:
            keys.append(derived)
    return SecretBox(keys)
