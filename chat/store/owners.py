"""Which process runs a thread's run, when several processes share the load.

Synchronous database operations, called through database_sync_to_async. Only the multi-process paths of
chat/runs/ use them; with one process, that process owns every run.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from ..models import Run
from .steps import finish_run, interrupt_stale_runs


@dataclass(frozen=True)
class LiveRun:
    run_id: int
    owner: str  # "" while no process has taken it yet (handed to the workers, or just resumed)


def take(*, run_id: int, owner: str) -> bool:
    """This process takes a running run that no process has taken yet; False when the run is no longer there to
    take (cancelled before it started, or taken by another)."""
    taken = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING, owner="").update(
        owner=owner, heartbeat_at=timezone.now()
    )
    return bool(taken)


def live_run(*, thread_id: uuid.UUID, stale_before: datetime) -> LiveRun | None:
    """The thread's running run, if its process is alive. One whose process stopped writing heartbeats
    (it died) becomes interrupted here, so whoever asked sees it as such."""
    run = Run.objects.filter(thread_id=thread_id, status=Run.Status.RUNNING).first()
    if run is None:
        return None
    beat = run.heartbeat_at or run.started_at
    if beat < stale_before:
        interrupt_stale_runs(stale_before=stale_before, keep=set(), thread_id=thread_id)
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
        finish_run(run_id=run_id, status=status, error=error, steps=run.steps)
        return True
