"""``manage.py rotate_secrets``: every secret stored encrypted (any EncryptedTextField of any model) encrypted
again with the first key of AGENTWEB_SECRET_KEYS; plaintext left from before encryption is encrypted too.

Rotation (docs/deploy.md, "Secrets at rest"): put the new key first in AGENTWEB_SECRET_KEYS and keep the old
ones after it, restart, run this, then drop the old keys. A secret no configured key decrypts is left as it is
and reported by model, row and field (never its value); the command then exits with an error, after
re-encrypting everything else.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS, transaction

from agentweb.fields import EncryptedTextField
from agentweb.secretbox import UnreadableSecret, box


def encrypted_fields() -> list[tuple[Any, EncryptedTextField]]:
    """(model, field) for every encrypted field of every installed model."""
    return [
        (model, field)
        for model in apps.get_models()
        for field in model._meta.concrete_fields
        if isinstance(field, EncryptedTextField)
    ]


class Command(BaseCommand):
    help = "Encrypt every stored secret again with the first key of AGENTWEB_SECRET_KEYS (key rotation)."

    def add_arguments(self, parser):
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS, help="The database to rotate (default: default).")

    def handle(self, *args: Any, database: str, **options: Any) -> None:
        box()  # a malformed AGENTWEB_SECRET_KEYS stops here, before anything is read
        rotated, unreadable = 0, []
        with transaction.atomic(using=database):
            for model, field in encrypted_fields():
                rows = model._base_manager.using(database)
                for pk, value in rows.values_list("pk", field.attname).order_by("pk"):
                    if not field.holds_secret(value):
                        continue
                    if isinstance(value, UnreadableSecret):
                        unreadable.append(f"{model._meta.verbose_name} {pk}: {field.name}")
                        continue
                    # update() writes through the field: encrypted with the first key; updated_at is left alone.
                    rows.filter(pk=pk).update(**{field.attname: value})
                    rotated += 1
        self.stdout.write(f"Encrypted {rotated} secret(s) again with the first key of AGENTWEB_SECRET_KEYS.")
        if unreadable:
            raise CommandError(
                f"{len(unreadable)} secret(s) cannot be decrypted with the configured keys and were left as they are "
                "(add the key that encrypted them to AGENTWEB_SECRET_KEYS and run this again, or enter them again "
                "in the admin): " + "; ".join(unreadable)
            )
