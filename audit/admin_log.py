"""The admin's changes: each of Django's admin LogEntry rows mirrored as an event.

Mirrored as it is saved (the `post_save` receiver in audit/receivers.py), in the admin's own transaction: the admin
writes its LogEntry inside the change's atomic block, so a change whose event cannot be written is undone. One case
sends no signal: "Delete selected" on more than one row writes its entries with `bulk_create`. Those are read in by
`read_in` (when the audit page or an export is opened, when the log is pruned, and by the process's pruner every
hour), with the entry's own time. Django's LogEntry has no IP address, so these events have none."""

from __future__ import annotations

from datetime import datetime

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from .actions import Action
from .models import Event
from .recording import Target, record

FLAGS = {ADDITION: Action.ADMIN_ADDED, CHANGE: Action.ADMIN_CHANGED, DELETION: Action.ADMIN_DELETED}
#: Entries read in per statement.
READ_IN_BATCH = 500


def mirror(entry: LogEntry) -> Event | None:
    action = FLAGS.get(entry.action_flag)
    if action is None:
        return None
    content_type = entry.content_type
    kind = f"{content_type.app_label}.{content_type.model}" if content_type else "admin"
    return record(
        action,
        actor=entry.user,
        target=Target(kind, entry.object_id or "", entry.object_repr),
        # Which fields changed, in the admin's words ("Changed name and expires at."): names, never values.
        detail={"change": entry.get_change_message()} if action == Action.ADMIN_CHANGED else None,
        at=entry.action_time,
        admin_log_entry=entry.pk,
    )


def read_in(since: datetime | None = None) -> int:
    """Mirror every LogEntry (since `since`: the retention's start) that has no event yet. Returns how many."""
    mirrored = Event.objects.filter(admin_log_entry=OuterRef("pk"))
    missing = LogEntry.objects.filter(~Exists(mirrored)).select_related("user", "content_type").order_by("pk")
    if since is not None:
        missing = missing.filter(action_time__gte=since)
    count = 0
    while True:
        batch = list(missing[:READ_IN_BATCH])
        if not batch:
            return count
        try:
            with transaction.atomic():
                for entry in batch:
                    mirror(entry)
        except IntegrityError:
            return count  # another process is reading the same entries in: it has them
        count += len(batch)
