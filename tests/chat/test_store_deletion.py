"""Deleting a thread by statements on it (chat/store/deletion.py): the same rows go, and the same are kept with their
keys emptied, as with Django's own cascade, on a thread with every kind of related row; the attachments' files go
too; and the delete commits in batches, so that others' writes go between. Runs on SQLite by default and on
PostgreSQL with DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentweb."""

from __future__ import annotations

import uuid

import pytest
from django.apps import apps
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from attachments.models import Attachment
from chat.models import (
    Message,
    OpenInputRequest,
    Run,
    Thread,
    ThreadSummary,
    ThreadToolGrant,
    ToolCall,
    ToolCallDecision,
    Usage,
)
from chat.store import deletion
from hooks.models import Delivery, Trigger
from schedules.models import Schedule, ScheduleRun
from sharing.models import ShareLink

pytestmark = pytest.mark.django_db

#: The apps whose rows a thread's delete may touch: every row of theirs is compared.
APPS = ("chat", "attachments", "sharing", "hooks", "schedules")


def full_thread(owner, tag: str, turns: int = 4) -> Thread:
    """A thread with every kind of row that points at it, its messages, runs and calls."""
    thread = Thread.objects.create(owner=owner, title=tag, has_versions=True)
    previous, order = None, 0
    for turn in range(turns):
        run = Run.objects.create(thread=thread, status="completed")
        order += 1
        if turn == 1:  # an edited question: the older version hidden, with its answer
            old = Message.all_versions.create(thread=thread, order=order, role="user", parent=previous, active=False)
            Message.all_versions.filter(pk=old.pk).update(hidden_under=old.pk)
            Message.all_versions.create(
                thread=thread, order=order + 1, role="assistant", parent=old, active=False, hidden_under=old.pk
            )
        asked = Message.objects.create(
            thread=thread, run=run, order=order, role="user", content=f"{tag} question {turn}", parent=previous
        )
        path = default_storage.save(f"attachments/{tag}-{turn}.txt", ContentFile(b"notes"))
        Attachment.objects.create(
            owner=owner, thread=thread, message=asked, name="n.txt", content_type="text/plain", kind="text", size=5,
            path=path,
        )  # fmt: skip
        order += 1
        answer = Message.objects.create(
            thread=thread, run=run, order=order, role="assistant", content=f"{tag} answer {turn}", parent=asked
        )
        call = ToolCall.objects.create(message=answer, call_id=f"c-{tag}-{turn}", name="calculator", status="success")
        ToolCallDecision.objects.create(tool_call=call, user=owner, decision="approve")
        order += 1
        Message.objects.create(thread=thread, order=order, role="tool", tool_call_id=call.call_id, content="42")
        Usage.objects.create(user=owner, thread=thread, run=run, input_tokens=10, output_tokens=5)
        previous = answer
    unsent = default_storage.save(f"attachments/{tag}-unsent.txt", ContentFile(b"draft"))
    Attachment.objects.create(
        owner=owner, thread=thread, name="d.txt", content_type="text/plain", kind="text", size=5, path=unsent
    )
    ThreadSummary.objects.create(thread=thread, run=run, text="so far", through_order=2, through_message=asked)
    OpenInputRequest.objects.create(id=uuid.uuid4().hex, thread=thread, run=run, tool_call=call.pk)
    ThreadToolGrant.objects.create(thread=thread, tool_name="calculator", granted_by=owner)
    ShareLink.objects.create(thread=thread, token_hash=uuid.uuid4().hex, display_name="O")
    trigger = Trigger.objects.create(owner=owner, prompt="go", secret="s")
    Delivery.objects.create(trigger=trigger, delivery_id=tag, thread=thread)
    schedule = Schedule.objects.create(owner=owner, agent="a", prompt="p", thread=thread)
    now = timezone.now()
    ScheduleRun.objects.create(schedule=schedule, slot=now, claimed_at=now, thread=thread, run=run)
    return thread


def every_row() -> dict[str, list[tuple]]:
    rows = {}
    for app in APPS:
        for model in apps.get_app_config(app).get_models():
            names = [f.attname for f in model._meta.concrete_fields]
            rows[model._meta.label] = list(model._base_manager.order_by("pk").values_list(*names))
    return rows


def files_of(thread_tag: str) -> list[str]:
    _, names = default_storage.listdir("attachments")
    return sorted(name for name in names if name.startswith(thread_tag))


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 3: a four-turn thread takes several of each."""
    monkeypatch.setattr(deletion, "BATCH", 3)


def test_it_deletes_and_keeps_the_same_rows_as_djangos_cascade(owner, stranger, small_batches):
    thread = full_thread(owner, "gone")
    full_thread(owner, "kept")
    full_thread(stranger, "theirs")
    before = every_row()

    point = transaction.savepoint()
    Thread.objects.get(pk=thread.pk).delete()
    by_django = every_row()
    transaction.savepoint_rollback(point)
    assert every_row() == before

    deletion.delete_thread(thread.pk)
    assert every_row() == by_django
    # Not a comparison of two empty sets: the thread's rows went, what was spent stayed, emptied.
    assert not Message.all_versions.filter(thread_id=thread.pk).exists()
    assert Usage.objects.filter(thread=None, run=None).count() == 4
    assert Message.all_versions.filter(thread__title="kept").count() == len(before["chat.Message"]) // 3


def test_the_attachments_files_go_with_the_thread(owner, small_batches, django_capture_on_commit_callbacks):
    thread = full_thread(owner, "gone")
    full_thread(owner, "kept")
    assert len(files_of("gone")) == 5

    with django_capture_on_commit_callbacks(execute=True):
        deletion.delete_thread(thread.pk)

    assert files_of("gone") == []
    assert len(files_of("kept")) == 5


@pytest.mark.django_db(transaction=True)
def test_it_commits_batch_by_batch_so_others_can_write_between(owner, stranger, small_batches, monkeypatch):
    thread = full_thread(owner, "gone", turns=3)  # 11 messages (two of them an older version)
    theirs = Thread.objects.create(owner=stranger, title="theirs")
    left_after_each_commit = []
    batch = deletion._messages

    def watched(thread_id):
        taken = batch(thread_id)

        def between():  # committed: what another connection sees now, and a write of another person's goes in
            left_after_each_commit.append(Message.all_versions.filter(thread_id=thread_id).count())
            Message.objects.create(thread=theirs, order=len(left_after_each_commit), role="user", content="hi")

        transaction.on_commit(between)
        return taken

    monkeypatch.setattr(deletion, "_messages", watched)
    deletion.delete_thread(thread.pk)

    assert left_after_each_commit == [8, 5, 2, 0]
    assert not Thread.objects.filter(pk=thread.pk).exists()
    assert theirs.messages.count() == 4


def test_a_thread_without_anything_is_deleted(owner):
    thread = Thread.objects.create(owner=owner, title="empty")
    deletion.delete_thread(thread.pk)
    assert not Thread.objects.filter(pk=thread.pk).exists()
