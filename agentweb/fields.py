"""Model fields whose value is encrypted at rest (agentweb/secretbox.py).

In Python the value is the plaintext; in the database it is ``fernet:v1:<token>``. A token none of the
configured keys decrypts reads as an ``UnreadableSecret`` rather than failing the query: the page that lists
the row still opens, and the code that needs the plaintext reports which secret cannot be read. Saving such a
row writes its token back unchanged.

The column is a text column. Equal plaintexts give different tokens, so the fields cannot be searched or
filtered on (but for the empty value, stored as it is). ``dumpdata`` writes the tokens, ``loaddata`` reads them
back with the same keys.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.db import models

from agentweb.secretbox import UnreadableSecret, UnreadableSecretError, box, is_encrypted

__all__ = ["EncryptedJSONField", "EncryptedTextField", "PasswordURLField", "decrypt_column", "encrypt_column"]


class EncryptedTextField(models.TextField):
    """Text, encrypted at rest. The empty string is stored as it is (nothing to hide but that it is empty)."""

    description = "Text encrypted at rest (Fernet)"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return self._read(value)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str) and is_encrypted(value):  # a token: loaddata, or a raw value handed in
            return self._read(value)
        if value is None or isinstance(value, UnreadableSecret):
            return value
        return super().to_python(value)

    def get_db_prep_save(self, value: Any, connection: Any) -> Any:
        if hasattr(value, "as_sql"):  # an expression (bulk_update's CASE): its values come back through here
            return value
        return self._write(value)

    def value_to_string(self, obj: Any) -> str:
        """The serialised form (dumpdata): the token, never the plaintext."""
        return self._write(self.value_from_object(obj))

    def formfield(self, **kwargs: Any) -> forms.Field:
        # Write-only wherever a ModelForm picks the field up on its own.
        defaults = {"widget": forms.PasswordInput(render_value=False), "strip": True}
        return super().formfield(**{**defaults, **kwargs})

    # --- the conversion, shared with EncryptedJSONField ---

    def _plain(self, text: str) -> Any:
        """The Python value of decrypted (or legacy plaintext) text."""
        return text

    def holds_secret(self, value: Any) -> bool:
        """Whether a stored value is a secret (rotate_secrets re-encrypts those)."""
        return value not in (None, "")

    def _text(self, value: Any) -> str:
        """The text to encrypt for a Python value."""
        return str(value)

    def _read(self, value: Any) -> Any:
        if value is None or value == "":
            return value
        try:
            return self._plain(box().decrypt(value))
        except UnreadableSecretError:
            return UnreadableSecret(value)

    def _write(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, UnreadableSecret):
            return value.token
        text = self._text(value)
        return text if text == "" else box().encrypt(text)


class EncryptedJSONField(EncryptedTextField):
    """A JSON value encrypted as one token (the whole document: keys too). Not editable in a ModelForm."""

    description = "JSON encrypted at rest (Fernet)"

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("editable") is False:
            del kwargs["editable"]
        else:
            kwargs["editable"] = True
        return name, path, args, kwargs

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str) and is_encrypted(value):  # a token: loaddata
            return self._read(value)
        return value  # already the Python value (as JSONField: a string is a JSON string), or UnreadableSecret

    def _plain(self, text: str) -> Any:
        return json.loads(text)

    def _text(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    def _read(self, value: Any) -> Any:
        return None if value is None else super()._read(value)


class PasswordURLField(EncryptedTextField):
    """A URL that may carry a password (http://user:password@host/v1, a server behind basic auth): encrypted at
    rest when it has one, stored as it is when it has none (most rows: nothing to hide, and it stays readable and
    searchable in the database). Edited in a plain text box: the form hides the password itself."""

    description = "URL whose password is encrypted at rest (Fernet)"

    def formfield(self, **kwargs: Any) -> forms.Field:
        return models.TextField.formfield(self, **{"widget": forms.TextInput(attrs={"size": 60}), **kwargs})

    def holds_secret(self, value: Any) -> bool:
        return isinstance(value, UnreadableSecret) or url_has_password(value)

    def _read(self, value: Any) -> Any:
        return super()._read(value) if is_encrypted(value) else value

    def _write(self, value: Any) -> Any:
        if isinstance(value, str) and not url_has_password(value):
            return value
        return super()._write(value)


def url_has_password(url: Any) -> bool:
    """`scheme://user:password@host…`: a colon in the userinfo."""
    if not isinstance(url, str):
        return False
    authority = url.partition("://")[2].partition("/")[0]
    userinfo, at, _ = authority.rpartition("@")
    return bool(at) and ":" in userinfo


# --- for migrations: the rows of a column, encrypted or decrypted in place ---------------------------


def encrypt_column(connection: Any, table: str, column: str, pk: str = "id", *, only=None) -> int:
    """Encrypt every non-empty plaintext value of ``table.column`` with the first key, through ``connection``
    (a migration's ``schema_editor.connection``); with ``only``, the values for which ``only(value)`` is true.
    Raw SQL: the migration of a field to EncryptedTextField calls it after the AlterField. Returns how many rows
    changed."""

    def encrypt(value: str) -> str:
        if value == "" or is_encrypted(value) or (only is not None and not only(value)):
            return value
        return box().encrypt(value)

    return _rewrite(connection, table, column, pk, encrypt)


def decrypt_column(connection: Any, table: str, column: str, pk: str = "id") -> int:
    """The reverse: every token of ``table.column`` back to plaintext. Raises UnreadableSecretError (naming
    the row) when a token cannot be decrypted: nothing is written as plaintext that was not decrypted."""

    def decrypt(value: str) -> str:
        return box().decrypt(value)

    return _rewrite(connection, table, column, pk, decrypt)


def _rewrite(connection: Any, table: str, column: str, pk: str, change) -> int:
    quote = connection.ops.quote_name
    changed = 0
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {quote(pk)}, {quote(column)} FROM {quote(table)}")
        rows = cursor.fetchall()
        for key, value in rows:
            if value is None:
                continue
            try:
                new = change(value)
            except UnreadableSecretError:
                raise UnreadableSecretError(
                    f"{table}.{column} of row {key} cannot be decrypted: configure the key that encrypted it "
                    "(AGENTWEB_SECRET_KEYS) and migrate again."
                ) from None
            if new != value:
                cursor.execute(f"UPDATE {quote(table)} SET {quote(column)} = %s WHERE {quote(pk)} = %s", [new, key])
                changed += 1
    return changed
