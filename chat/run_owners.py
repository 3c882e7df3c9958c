"""Which process runs a thread's run, and the thread's event numbers, when several processes share the load.

Synchronous database operations (as in chat/services.py), called through database_sync_to_async. Only the
multi-process paths of chat/runs.py use them; with one process, that process owns every run.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from . import services
from .models import Run, Thread


@dataclass(frozen=True)
class LiveRun:
    run_id: int
    owner: str  # "" while no process has taken it yet (handed to the workers, or just resumed)


def take(*, run_id: int, owner: str) -> int | None:
    """This process takes a running run that no process has taken yet. Returns the thread's last event
    number to go on from, or None when the run is no longer there to take (cancelled before it started)."""
    with transaction.atomic():
        # The thread's row locked, as reserve_seqs_unless_owned locks it: numbers are either reserved before this
        # (and read here) or, once the run has its owner, sent to that owner to number.
        last_seq = Thread.objects.select_for_update().filter(runs__pk=run_id).values_list("last_seq", flat=True).first()
        if last_seq is None:
            return None
        taken = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING, owner="").update(
            owner=owner, heartbeat_at=timezone.now()
        )
        return last_seq if taken else None


def live_run(*, thread_id: uuid.UUID, stale_before: datetime) -> LiveRun | None:
    """The thread's running run, if its process is alive. One whose process stopped writing heartbeats
    (it died) becomes interrupted here, so whoever asked sees it as such."""
    run = Run.objects.filter(thread_id=thread_id, status=Run.Status.RUNNING).first()
    if run is None:
        return None
    beat = run.heartbeat_at or run.started_at
    if beat < stale_before:
        services.interrupt_stale_runs(stale_before=stale_before, keep=set(), thread_id=thread_id)
        return None
    return LiveRun(run.pk, run.owner)


def cancel_untaken(*, run_id: int) -> bool:
    """Cancel a run handed to the workers that none has taken yet; False when one has."""
    return _finish_untaken(run_id, Run.Status.CANCELLED)


def fail_untaken(*, run_id: int, error: str) -> bool:
    """Fail a run handed to the workers that none has taken yet (none is running); False when one has."""
    return _finish_untaken(run_id, Run.Status.FAILED, error)


def _finish_untaken(run_id: int, status: str, error: str = "") -> bool:
    with transaction.atomic():
        run = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING, owner="").select_for_update().first()
        if run is None:
            return False
        services.finish_run(run_id=run_id, status=status, error=error, steps=run.steps, last_seq=None)
        return True


def reserve_seqs_unless_owned(
    *, thread_id: uuid.UUID, count: int, stale_before: datetime, own_address: str | None
) -> tuple[int | None, str | None]:
    """`count` event numbers of the thread from the database: (the first, None); or (None, owner) when a live run
    of another process numbers the thread's events, which then go to it. One transaction with the thread's row
    locked, so that a process taking the thread's run meanwhile (`take`) cannot number from the same place."""
    with transaction.atomic():
        Thread.objects.select_for_update().filter(pk=thread_id).values_list("pk", flat=True).first()
        live = live_run(thread_id=thread_id, stale_before=stale_before)
        if live is not None and live.owner and live.owner != own_address:
            return None, live.owner
        return reserve_seqs(thread_id=thread_id, count=count), None


def reserve_seqs(*, thread_id: uuid.UUID, count: int) -> int:
    """Reserve `count` event numbers of the thread, whichever process asks; returns the first."""
    with transaction.atomic():
        Thread.objects.filter(pk=thread_id).update(last_seq=F("last_seq") + count)
        last = Thread.objects.filter(pk=thread_id).values_list("last_seq", flat=True).get()
    return last - count + 1
