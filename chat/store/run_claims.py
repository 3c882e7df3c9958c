"""Which process has claimed a thread's run (`Run.owner`, a process's channel address — not `Thread.owner`, the
person), when several processes share the load.

Synchronous database operations, called through database_sync_to_async. Only the multi-process paths of
chat/runs/ use them; with one process, that process owns every run.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..models import Message, Run
from .steps import STOPPED_SERVER_ERROR, finish_run, interrupt_stale_runs


@dataclass(frozen=True)
class LiveRun:
    run_id: int
    owner: str  # "" while no process has taken it yet (handed to the workers, or just resumed)
    #: False when its process stopped writing heartbeats (it died): see running_run.
    alive: bool = True


def take(*, run_id: int, owner: str) -> bool:
    """This process takes a running run that no process has taken yet; False when the run is no longer there to
    take (cancelled before it started, or taken by another)."""
    taken = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING, owner="").update(
        owner=owner, heartbeat_at=timezone.now()
    )
    return bool(taken)


def running_run(*, thread_id: uuid.UUID, stale_before: datetime) -> LiveRun | None:
    """The thread's running run, and whether its process is alive (it wrote a heartbeat since `stale_before`).
    Async callers interrupt a dead one with the text its tabs were shown (chat/runs/recovery.py live_run)."""
    run = Run.objects.filter(thread_id=thread_id, status=Run.Status.RUNNING).first()
    if run is None:
        return None
    beat = run.heartbeat_at or run.started_at
    return LiveRun(run.pk, run.owner, alive=beat >= stale_before)


def live_run(*, thread_id: uuid.UUID, stale_before: datetime) -> LiveRun | None:
    """The thread's running run, if its process is alive. One whose process stopped writing heartbeats
    (it died) becomes interrupted here, with the text it last wrote, so whoever asked sees it as such."""
    run = running_run(thread_id=thread_id, stale_before=stale_before)
    if run is not None and not run.alive:
        interrupt_stale_runs(stale_before=stale_before, keep=set(), thread_id=thread_id)
        return None
    return run


def stale_runs(*, stale_before: datetime, keep: set[int]) -> list[tuple[uuid.UUID, LiveRun]]:
    """Running runs whose process stopped writing heartbeats (and none of `keep`), with their threads."""
    running = Run.objects.filter(status=Run.Status.RUNNING).exclude(pk__in=keep)
    dead = running.filter(Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True, started_at__lt=stale_before))
    return [
        (thread_id, LiveRun(pk, owner, alive=False))
        for pk, owner, thread_id in dead.values_list("pk", "owner", "thread_id")
    ]


def interrupt_dead_run(*, run_id: int, stale_before: datetime, texts: dict[int, str]) -> list[tuple[int, str]] | None:
    """A run whose process died becomes interrupted, its streaming answer given `texts[message id]` — the text its
    tabs were shown, read back from the thread's log — when that goes on from what the run last wrote (it wrote its
    text only every AGENTWEB_FLUSH_INTERVAL). Returns the answers it closed, (id, text), or None when the run is no
    longer a dead one (another process interrupted it first, or its heartbeat came back)."""
    with transaction.atomic():
        run = (
            Run.objects.select_for_update()
            .filter(pk=run_id, status=Run.Status.RUNNING)
            .filter(Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True, started_at__lt=stale_before))
            .first()
        )
        if run is None:
            return None
        closed = []
        for message in Message.objects.filter(run_id=run_id, status=Message.Status.STREAMING).only("pk", "content"):
            streamed = texts.get(message.pk, "")
            if len(streamed) > len(message.content) and streamed.startswith(message.content):
                message.content = streamed
                message.save(update_fields=["content"])
            closed.append((message.pk, message.content))
        finish_run(run_id=run_id, status=Run.Status.INTERRUPTED, error=STOPPED_SERVER_ERROR, steps=run.steps)
    return closed


def fail_untaken(*, run_id: int, error: str) -> bool:
    """Fail a run handed to the workers that none has taken yet (none is running); False when one has."""
    return _finish_untaken(run_id, Run.Status.FAILED, error)


def _finish_untaken(run_id: int, status: str, error: str = "") -> bool:
    with transaction.atomic():
        run = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING, owner="").select_for_update().first()
        if run is None:
            return False
        finish_run(run_id=run_id, status=status, error=error, steps=run.steps)
        return True
