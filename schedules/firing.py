"""Firing due schedules exactly once across every process of the deployment.

A claim is one transaction: the due schedules are read (on PostgreSQL with FOR UPDATE SKIP LOCKED, so that claimers
share them out rather than queue on each other's rows), each is moved past the present by a conditional UPDATE
(`… SET next_run_at = <next slot after now> WHERE id = … AND next_run_at = <the slot read>`: of two claimers that
read the same slot, one updates a row and the other none), and a ScheduleRun is written for it. A deployment that was
down finds a slot long past: it fires it once and moves on to the first slot after now, not slot by slot.

The run starts after the commit, as its owner (chat.runs.begin_turn with the ScheduleRun's client_msg_id): a process
killed between the two leaves a ScheduleRun still `claimed`, which any process starts again once it is older than
AGENTWEB_SCHEDULE_CLAIM_STALE_SECONDS, opening the same turn (begin_turn is idempotent by client_msg_id) rather than
a second one. A run started whose process then died is the run layer's to recover (chat/runs/recovery.py).
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from functools import partial

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from agents.services import pick_by_slug
from chat import runs
from chat.caller import Caller
from chat.error_codes import REFUSED, client_error
from chat.models import Message, Source
from tools.services import toolset_for_page

from .models import REASON_CHARS, Schedule, ScheduleRun
from .timing import BadTiming, next_slot, zone_of

log = logging.getLogger("agentweb.schedules")
db = database_sync_to_async

#: Schedules claimed by one transaction. More due are claimed by the next tick, a moment later (the ticker sleeps
#: until the soonest due), or meanwhile by another process: SKIP LOCKED shares a burst out among the claimers.
CLAIM_BATCH = 50
#: Refusals of begin_turn that pause the schedule (what its owner must change); others fail the one firing.
PAUSING_CODES = ("budget_exhausted", "not_found", "unknown_tool", "not_allowed", "images_not_supported")


def slot_after(schedule: Schedule, now: datetime, anchor: datetime | None = None) -> datetime:
    return next_slot(
        kind=schedule.kind,
        cron=schedule.cron,
        time_zone=schedule.time_zone,
        every_minutes=schedule.every_minutes,
        after=now,
        anchor=anchor,
    )


def claim_due(now: datetime | None = None) -> list[int]:
    """Claim the schedules due at `now`: the ScheduleRuns written (their ids), each the only one for its slot."""
    now = now or timezone.now()
    claimed: list[int] = []
    with transaction.atomic():
        due = Schedule.objects.filter(paused=False, next_run_at__lte=now).order_by("next_run_at", "pk")
        if connection.features.has_select_for_update_skip_locked:
            due = due.select_for_update(skip_locked=True, of=("self",))
        for schedule in due.only("pk", "kind", "cron", "time_zone", "every_minutes", "next_run_at")[:CLAIM_BATCH]:
            slot = schedule.next_run_at
            try:
                following = slot_after(schedule, now, anchor=slot)
            except BadTiming as error:  # a zone the system no longer knows, say: paused rather than retried forever
                Schedule.objects.filter(pk=schedule.pk).update(paused=True, pause_reason=str(error)[:REASON_CHARS])
                continue
            moved = Schedule.objects.filter(pk=schedule.pk, next_run_at=slot, paused=False).update(
                next_run_at=following, last_run_at=now
            )
            if moved == 1:
                claimed.append(ScheduleRun.objects.create(schedule_id=schedule.pk, slot=slot, claimed_at=now).pk)
    return claimed


def reclaim_stale(now: datetime | None = None) -> list[int]:
    """ScheduleRuns left `claimed` by a process that died before their run started: taken again, each by one
    process (a conditional UPDATE of claimed_at)."""
    now = now or timezone.now()
    before = now - timedelta(seconds=settings.AGENTWEB_SCHEDULE_CLAIM_STALE_SECONDS)
    taken = []
    stale = ScheduleRun.objects.filter(status=ScheduleRun.Status.CLAIMED, claimed_at__lt=before)
    for pk, claimed_at in stale.values_list("pk", "claimed_at")[:CLAIM_BATCH]:
        if ScheduleRun.objects.filter(pk=pk, status=ScheduleRun.Status.CLAIMED, claimed_at=claimed_at).update(
            claimed_at=now
        ):
            taken.append(pk)
    return taken


def run_now(schedule: Schedule) -> int:
    """A firing asked for by hand ("Run now"): its ScheduleRun, outside the schedule's slots."""
    return ScheduleRun.objects.create(schedule=schedule, slot=timezone.now(), claimed_at=timezone.now(), manual=True).pk


def active_owner(user_id: int):
    """Who the turn is written as: the owner while their account is active (Caller.current)."""
    return get_user_model().objects.filter(pk=user_id, is_active=True).first()


def fill(prompt: str, slot: datetime, time_zone: str) -> str:
    """{date} and {time} as the slot is in the schedule's zone; other braces are left as written."""
    try:
        local = slot.astimezone(zone_of(time_zone))
    except BadTiming:
        local = slot
    return prompt.replace("{date}", local.strftime("%Y-%m-%d")).replace("{time}", local.strftime("%H:%M"))


def prepare(job_id: int) -> tuple[ScheduleRun, str | None]:
    """The firing with its schedule and owner, and why the schedule cannot fire (None: it can)."""
    job = ScheduleRun.objects.select_related("schedule", "schedule__owner").get(pk=job_id)
    schedule = job.schedule
    if not schedule.owner.is_active:
        return job, "The owner's account is deactivated."
    agent = pick_by_slug(schedule.owner, schedule.agent)
    if agent is None:
        return job, f"The agent {schedule.agent!r} is no longer one its owner can use."
    lost = lost_tools(schedule.owner, agent)
    if lost:
        names = ", ".join(repr(name) for name in lost[:5]) + (" and others" if len(lost) > 5 else "")
        return job, (
            f"The agent {schedule.agent!r} has tools its owner may no longer use ({names}): "
            "switched off, or not allowed for their groups."
        )
    return job, None


def lost_tools(owner, agent) -> list[str]:
    """The tools `agent` names that exist but `owner` may not use now (switched off by the admin, a disabled MCP
    server's, or not allowed for the owner's groups). A run would go on without them and quietly do less than the
    schedule was made for, so the schedule pauses instead. An agent with every tool has none to lose: it takes
    what its owner may use."""
    if agent.all_tools or not agent.tools:
        return []
    disabled = toolset_for_page(owner).disabled
    return [name for name in agent.tools if isinstance(name, str) and name in disabled]


def finish(job_id: int, status: str, *, error: str = "", thread_id=None, run_id=None, pause: str = "") -> None:
    with transaction.atomic():
        ScheduleRun.objects.filter(pk=job_id).update(
            status=status, error=error[:REASON_CHARS], thread_id=thread_id, run_id=run_id
        )
        job = ScheduleRun.objects.select_related("schedule").get(pk=job_id)
        if pause:
            Schedule.objects.filter(pk=job.schedule_id).update(paused=True, pause_reason=pause[:REASON_CHARS])
        if thread_id is not None and job.schedule.target == Schedule.Target.ONE and job.schedule.thread_id is None:
            Schedule.objects.filter(pk=job.schedule_id, thread__isnull=True).update(thread_id=thread_id)


def replayed_thread(owner_id: int, client_msg_id: uuid.UUID):
    message = Message.all_versions.filter(thread__owner_id=owner_id, client_msg_id=client_msg_id).first()
    return message.thread_id if message is not None else None


async def fire(job_id: int) -> str:
    """Start the run of a claimed firing; its ScheduleRun says how it went. Returns the status."""
    job, reason = await db(prepare)(job_id)
    schedule = job.schedule
    if reason:
        await db(finish)(job_id, ScheduleRun.Status.PAUSED, error=reason, pause=reason)
        return ScheduleRun.Status.PAUSED
    grows = schedule.target == Schedule.Target.ONE and schedule.thread_id is not None
    try:
        turn, setup = await runs.begin_turn(
            user=schedule.owner,
            session_key=None,
            thread_id=str(schedule.thread_id) if grows else None,
            content=fill(schedule.prompt, job.slot, schedule.time_zone),
            client_msg_id=job.client_msg_id,
            agent=None if grows else schedule.agent,
            model=None,
            caller=Caller(current=partial(active_owner, schedule.owner_id), source=Source.SCHEDULE),
        )
    except runs.SignedOut:
        reason = "The owner's account is deactivated."
        await db(finish)(job_id, ScheduleRun.Status.PAUSED, error=reason, pause=reason)
        return ScheduleRun.Status.PAUSED
    except REFUSED as refused:
        error = client_error(refused, {"type": "message.send", "agent": schedule.agent, "model": ""})
        if error.code == "run_active":  # the thread that grows is still answering the last firing
            await db(finish)(job_id, ScheduleRun.Status.SKIPPED, error=error.message)
            return ScheduleRun.Status.SKIPPED
        if error.code in PAUSING_CODES:
            await db(finish)(job_id, ScheduleRun.Status.PAUSED, error=error.message, pause=error.message)
            return ScheduleRun.Status.PAUSED
        await db(finish)(job_id, ScheduleRun.Status.FAILED, error=error.message)
        return ScheduleRun.Status.FAILED
    if turn.run is None:  # started before, by a process that died before it wrote so: the same turn, found again
        thread_id = await db(replayed_thread)(schedule.owner_id, job.client_msg_id)
        await db(finish)(job_id, ScheduleRun.Status.STARTED, thread_id=thread_id)
        return ScheduleRun.Status.STARTED
    await db(finish)(job_id, ScheduleRun.Status.STARTED, thread_id=turn.thread.pk, run_id=turn.run.pk)
    await runs.launch_run(turn, setup=setup)
    return ScheduleRun.Status.STARTED


async def fire_safely(job_id: int) -> str:
    try:
        return await fire(job_id)
    except Exception as error:
        log.exception("schedule run %s could not be started", job_id)
        try:
            await db(finish)(job_id, ScheduleRun.Status.FAILED, error=f"Could not start: {type(error).__name__}")
        except Exception:
            log.exception("schedule run %s: its failure could not be written", job_id)
        return ScheduleRun.Status.FAILED
