"""Deleting a thread: every row that goes with it, without reading them into Python.

Django's `thread.delete()` collects the thread's messages, runs, tool calls and attachments in Python to cascade
and to null what points at them (the Usage rows' keys, the messages' parents): 21 s for a 10,000-message chat on
PostgreSQL (bench/data, docs/performance.md). Here each table is one statement whose rows are chosen by a subquery
on the thread, what points at a row handled before the row, as each foreign key's on_delete says (CASCADE: deleted
the same way, SET_NULL: emptied), read from the models, so a relation added later is handled too. The same rows go
as with Django's cascade (tests/chat/test_store_deletion.py compares both on every kind of related row).

A model with delete receivers is deleted by QuerySet.delete(), row by row in Python as before, so that its
receivers run: an attachment's file goes with its row once the batch commits (attachments/signals.py). SQLite's
full-text triggers (chat migration 0021) fire on any DELETE, and PostgreSQL's index is kept by any.

In bounded batches, each its own transaction: SQLite has one write lock, and deleting 100,000 messages in one
transaction would hold it, and so stall every other person's turn, for as long as that takes; between two batches
their writes go through. A delete cut short (a crash) leaves the thread with its oldest messages; deleting it again
finishes it. The last transaction takes what is left, whatever a run still going wrote meanwhile, and the row."""

from __future__ import annotations

import uuid

from django.db import models, transaction
from django.db.models.signals import post_delete, pre_delete

from ..models import Message, Run, Thread, Usage
from ..queries import delete_rows

#: Messages (or runs, or Usage rows emptied) per transaction: a batch of 1,000 messages with their calls and
#: attachments takes tens of milliseconds, the longest another person's write waits for it on SQLite.
BATCH = 1000
#: The thread's relations with many rows: taken in batches before the thread's last transaction.
BATCHED = ("chat.Message.thread", "chat.Run.thread", "chat.Usage.thread")


def delete_thread(thread_id: uuid.UUID) -> None:
    """Delete the thread and everything that goes with it (see the module's docstring). Usage rows are kept with
    their thread and run emptied, as their model says: what was spent stays spent."""
    thread = Thread.objects.filter(pk=thread_id)
    with transaction.atomic():
        # First the few rows of the thread's own: a share link's page stops showing the chat while its messages go.
        _clear(thread, skip=BATCHED)
    for batch in (_messages, _runs, _usage):
        while True:
            with transaction.atomic():
                if batch(thread_id) < BATCH:
                    break
    with transaction.atomic():
        _delete(thread)


def _messages(thread_id: uuid.UUID) -> int:
    """The thread's newest BATCH messages (every version) and what hangs on them; how many there were."""
    return _newest(Message.all_versions.filter(thread_id=thread_id))


def _runs(thread_id: uuid.UUID) -> int:
    return _newest(Run.objects.filter(thread_id=thread_id))


def _newest(rows: models.QuerySet) -> int:
    ids = list(rows.order_by("-pk").values_list("pk", flat=True)[:BATCH])
    if ids:
        _delete(rows.filter(pk__gte=ids[-1]))
    return len(ids)


def _usage(thread_id: uuid.UUID) -> int:
    some = Usage.objects.filter(thread_id=thread_id).order_by().values("pk")[:BATCH]
    return Usage.objects.filter(pk__in=some).update(thread=None)


def _delete(rows: models.QuerySet) -> None:
    """Delete `rows` and, first, what points at them."""
    if _has_receivers(rows.model):
        rows.delete()  # Django's collector: each row read, its receivers called
        return
    _clear(rows)
    delete_rows(rows)


def _clear(rows: models.QuerySet, skip: tuple[str, ...] = ()) -> None:
    """What points at `rows`, as each relation's on_delete says, but the relations named in `skip`."""
    ids = rows.order_by().values("pk")
    for field in _pointing_at(rows.model):
        if f"{field.model._meta.label}.{field.name}" in skip:
            continue
        related = field.model._base_manager.filter(**{f"{field.name}__in": ids})
        if field.remote_field.on_delete is models.CASCADE:
            _delete(related)
        elif field.remote_field.on_delete is models.SET_NULL:
            if field.model is rows.model:  # a row's key to another being deleted with it: no need to empty it
                related = related.exclude(pk__in=ids)
            related.update(**{field.name: None})
        elif field.remote_field.on_delete is not models.DO_NOTHING:
            # PROTECT, RESTRICT, SET_DEFAULT, SET(): none points at a thread's rows; Django's delete handles them.
            raise NotImplementedError(f"{field} on_delete={field.remote_field.on_delete.__name__}")


def _pointing_at(model: type[models.Model]) -> list[models.ForeignKey]:
    """The foreign keys (one-to-one too, and those without a reverse name) that point at `model`."""
    return [
        f.field
        for f in model._meta.get_fields(include_hidden=True)
        if f.auto_created and not f.concrete and (f.one_to_many or f.one_to_one)
    ]


def _has_receivers(model: type[models.Model]) -> bool:
    return pre_delete.has_listeners(model) or post_delete.has_listeners(model)
