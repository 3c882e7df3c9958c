"""A deleted attachment row takes its file with it (a thread's delete, a rewind, a person's delete, cleanup), once
the transaction commits: a delete that rolls back keeps the file."""

from __future__ import annotations

import logging

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from .models import Attachment

log = logging.getLogger("agentweb.attachments")


@receiver(post_delete, sender=Attachment)
def remove_file(sender, instance: Attachment, **kwargs) -> None:
    path = instance.path

    def remove() -> None:
        try:
            default_storage.delete(path)
        except Exception:  # a storage that fails must not fail the delete; the file is an orphan then
            log.warning("Could not remove the attachment file %s", path, exc_info=True)

    transaction.on_commit(remove)
