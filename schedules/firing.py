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

import asyncio
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from channels.db import database_sync_to_async
from django.apps import apps
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Case, DateTimeField, IntegerField, Q, UUIDField, Value, When
from django.utils import timezone

from agents.models import visible_to
from agents.services import own_first, pick_by_slug, pick_many_by_slug
from chat import runs
from chat.broadcast import tell_user
from chat.caller import Caller
from chat.error_codes import REFUSED, client_error
from chat.live import events
from chat.models import Message, Source
from chat.runs.execute import start_here
from chat.runs.new_turns import Asked, groups_of_people, open_new_turns
from chat.runs.placement import placement
from chat.runs.start import announce_waiting, open_turn
from chat.store import run_claims
from tools.services import settings_stamp, toolset_for_page, toolset_for_stamp

from .models import REASON_CHARS, Schedule, ScheduleRun
from .timing import BadTiming, next_slot, zone_of

log = logging.getLogger("agentweb.schedules")
db = database_sync_to_async

#: Schedules claimed by one transaction. More due are claimed by the next tick, a moment later (the ticker sleeps
#: until the soonest due), or meanwhile by another process: SKIP LOCKED shares a burst out among the claimers.
CLAIM_BATCH = 50
#: Threads a process opens firings' turns on at once (schedules/firing.py firing_threads); each holds a connection
#: of the process's pool (AGENTWEB_DB_POOL_SIZE, 10) while it works. A claim's firings are opened together in one
#: trip (open_firings), so one thread is enough: more only took the GIL from the event loop that runs the runs.
FIRING_THREADS = 1
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


def claim_due(now: datetime | None = None, limit: int = CLAIM_BATCH) -> list[int]:
    """Claim the schedules due at `now`, `limit` at most: the ScheduleRuns written (their ids), each the only one for
    its slot."""
    now = now or timezone.now()
    locked = connection.features.has_select_for_update_skip_locked
    with transaction.atomic():
        due = Schedule.objects.filter(paused=False, next_run_at__lte=now).order_by("next_run_at", "pk")
        if locked:
            due = due.select_for_update(skip_locked=True, of=("self",))
        moves: list[tuple[int, datetime, datetime]] = []  # (schedule, the slot read, the slot after now)
        for schedule in due.only("pk", "kind", "cron", "time_zone", "every_minutes", "next_run_at")[:limit]:
            slot = schedule.next_run_at
            try:
                moves.append((schedule.pk, slot, slot_after(schedule, now, anchor=slot)))
            except BadTiming as error:  # a zone the system no longer knows, say: paused rather than retried forever
                Schedule.objects.filter(pk=schedule.pk).update(paused=True, pause_reason=str(error)[:REASON_CHARS])
        if locked and moves:
            claimed = _move_together(moves, now)
            if claimed is not None:
                return claimed
        return [pk for pk in (_move_one(*move, now) for move in moves) if pk is not None]


def _move_one(schedule_id: int, slot: datetime, following: datetime, now: datetime) -> int | None:
    """The conditional UPDATE of one schedule, and its ScheduleRun when it moved (None: another claimer moved it)."""
    moved = Schedule.objects.filter(pk=schedule_id, next_run_at=slot, paused=False).update(
        next_run_at=following, last_run_at=now
    )
    return ScheduleRun.objects.create(schedule_id=schedule_id, slot=slot, claimed_at=now).pk if moved else None


def _move_together(moves: list[tuple[int, datetime, datetime]], now: datetime) -> list[int] | None:
    """The same conditional UPDATE for rows this transaction holds locked (FOR UPDATE), all in one statement, and
    their ScheduleRuns in one INSERT: a burst of 1,000 was 2,000 statements, the last claimed seconds after its
    slot. None, and nothing written, unless every row moved (then each is moved alone, as without the locks)."""
    condition = Q()
    for pk, slot, _ in moves:
        condition |= Q(pk=pk, next_run_at=slot)
    following = Case(*(When(pk=pk, then=Value(after)) for pk, _, after in moves), output_field=DateTimeField())
    try:
        with transaction.atomic():
            moved = Schedule.objects.filter(condition, paused=False).update(next_run_at=following, last_run_at=now)
            if moved != len(moves):
                raise _NotAll
            jobs = ScheduleRun.objects.bulk_create(
                ScheduleRun(schedule_id=pk, slot=slot, claimed_at=now) for pk, slot, _ in moves
            )
    except _NotAll:
        return None
    return [job.pk for job in jobs]


class _NotAll(Exception):
    """Some row of a claim did not move: the claim's savepoint is rolled back."""


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


def fill(prompt: str, slot: datetime, time_zone: str) -> str:
    """{date} and {time} as the slot is in the schedule's zone; other braces are left as written."""
    try:
        local = slot.astimezone(zone_of(time_zone))
    except BadTiming:
        local = slot
    return prompt.replace("{date}", local.strftime("%Y-%m-%d")).replace("{time}", local.strftime("%H:%M"))


def agent_lost(schedule: Schedule) -> str:
    return f"The agent {schedule.agent!r} is no longer one its owner can use."


def prepare(job_id: int) -> tuple[ScheduleRun, str | None]:
    """The firing with its schedule and owner, and why the schedule cannot fire (None: it can). The agent of a
    schedule that makes a new thread each time is checked as its turn is opened (agent_for_new_thread), not twice."""
    job = ScheduleRun.objects.select_related("schedule", "schedule__owner").get(pk=job_id)
    schedule = job.schedule
    if not schedule.owner.is_active:
        return job, "The owner's account is deactivated."
    if grows(schedule) and pick_by_slug(schedule.owner, schedule.agent) is None:
        return job, agent_lost(schedule)
    lost = lost_tools(schedule)
    if lost:
        names = ", ".join(repr(name) for name in lost[:5]) + (" and others" if len(lost) > 5 else "")
        return job, (
            f"The agent {schedule.agent!r} has tools its owner may no longer use ({names}): "
            "switched off, or not allowed for their groups."
        )
    return job, None


def lost_tools(schedule: Schedule) -> list[str]:
    """The tools the schedule's agent names that exist but its owner may not use now (switched off by the admin, a
    disabled MCP server's, or not allowed for the owner's groups). A run would go on without them and quietly do
    less than the schedule was made for, so the schedule pauses instead. An agent with every tool has none to lose:
    it takes what its owner may use. One small read of the agent (its tool list only); the tool set is the
    process's, kept per settings stamp. An agent the owner lost is said by the turn's opening (agent_lost)."""
    found = own_first(visible_to(schedule.owner).filter(slug=schedule.agent)).values_list("all_tools", "tools")
    all_tools, names = found.first() or (True, [])
    if all_tools or not names:
        return []
    disabled = toolset_for_page(schedule.owner).disabled
    return [name for name in names if isinstance(name, str) and name in disabled]


def owners_losing_tools(owners: dict[tuple[int, str], Any]) -> set[tuple[int, str]]:
    """lost_tools for a claim's (owner's id, agent's slug) pairs at once (each to its owner), in two statements
    however many: the pairs whose agent lists a tool its owner may no longer use. An agent they cannot pick is left
    to the turn's opening (agent_lost)."""
    named = {pair for pair in owners if pair[1]}
    if not named:
        return set()
    agents = pick_many_by_slug(named)
    groups = groups_of_people([user_id for user_id, _ in named])
    stamp = settings_stamp()
    losing = set()
    for (user_id, slug), agent in agents.items():
        if agent is None or agent.all_tools or not agent.tools:
            continue
        person = groups.get(user_id, frozenset())
        disabled = toolset_for_stamp(user=owners[(user_id, slug)], groups=person, stamp=stamp).disabled
        if any(isinstance(name, str) and name in disabled for name in agent.tools):
            losing.add((user_id, slug))
    return losing


def grows(schedule: Schedule) -> bool:
    """Its firings go to the one thread it made already."""
    return schedule.target == Schedule.Target.ONE and schedule.thread_id is not None


def finish(
    job_id: int,
    status: str,
    *,
    error: str = "",
    thread_id=None,
    run_id=None,
    pause: str = "",
    schedule: Schedule | None = None,
) -> None:
    """The firing's outcome. `schedule`: the firing's, read already (else read here)."""
    if schedule is not None and not pause and (schedule.target == Schedule.Target.NEW or schedule.thread_id):
        # Nothing but the ScheduleRun to write: one statement, no transaction around it.
        ScheduleRun.objects.filter(pk=job_id).update(
            status=status, error=error[:REASON_CHARS], thread_id=thread_id, run_id=run_id
        )
        return
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


@dataclass
class Opened:
    """What a firing's trip to the database did: its status, and the turn and run setup to start when it opened one."""

    status: str
    turn: object = None
    setup: object = None


def open_firing(job_id: int, inbox: str = "") -> Opened:
    """A firing's whole trip to the database, in one thread: whether the schedule can fire, the turn opened with its
    run's setup, the ScheduleRun's outcome, and (`inbox`, the process's address for the run, when runs are shared)
    the run taken by this process. Each step is its own transaction, as when they were separate trips."""
    job, reason = prepare(job_id)
    schedule = job.schedule
    if reason:
        finish(job_id, ScheduleRun.Status.PAUSED, error=reason, pause=reason)
        return Opened(ScheduleRun.Status.PAUSED)
    owner = schedule.owner
    try:
        turn, setup, _ = open_turn(
            user=owner,
            session_key=None,
            thread_id=str(schedule.thread_id) if grows(schedule) else None,
            content=fill(schedule.prompt, job.slot, schedule.time_zone),
            client_msg_id=job.client_msg_id,
            agent=None if grows(schedule) else schedule.agent,
            model=None,
            # Read active a moment ago, in this trip (prepare).
            caller=Caller(current=lambda: owner, source=Source.SCHEDULE),
            prepare=True,  # the run starts in this process (see fire)
        )
    except runs.UnknownAgent:
        reason = agent_lost(schedule)
        finish(job_id, ScheduleRun.Status.PAUSED, error=reason, pause=reason)
        return Opened(ScheduleRun.Status.PAUSED)
    except runs.SignedOut:
        reason = "The owner's account is deactivated."
        finish(job_id, ScheduleRun.Status.PAUSED, error=reason, pause=reason)
        return Opened(ScheduleRun.Status.PAUSED)
    except REFUSED as refused:
        error = client_error(refused, {"type": "message.send", "agent": schedule.agent, "model": ""})
        if error.code == "run_active":  # the thread that grows is still answering the last firing
            finish(job_id, ScheduleRun.Status.SKIPPED, error=error.message, schedule=schedule)
            return Opened(ScheduleRun.Status.SKIPPED)
        if error.code in PAUSING_CODES:
            finish(job_id, ScheduleRun.Status.PAUSED, error=error.message, pause=error.message)
            return Opened(ScheduleRun.Status.PAUSED)
        finish(job_id, ScheduleRun.Status.FAILED, error=error.message, schedule=schedule)
        return Opened(ScheduleRun.Status.FAILED)
    if turn.run is None:  # started before, by a process that died before it wrote so: the same turn, found again
        thread_id = replayed_thread(owner.pk, job.client_msg_id)
        finish(job_id, ScheduleRun.Status.STARTED, thread_id=thread_id, schedule=schedule)
        return Opened(ScheduleRun.Status.STARTED)
    finish(job_id, ScheduleRun.Status.STARTED, thread_id=turn.thread.pk, run_id=turn.run.pk, schedule=schedule)
    if inbox and not turn.awaiting and not run_claims.take(run_id=turn.run.pk, owner=inbox):
        return Opened(ScheduleRun.Status.STARTED)  # stopped from its page before this process took it
    return Opened(ScheduleRun.Status.STARTED, turn, setup)


def open_firings(job_ids: list[int], inbox: str = "") -> list[tuple[int, Opened]]:
    """open_firing for a claim's firings together, in one trip: the firings that open a new thread each time, of
    active owners, are read in one statement, opened together (chat.runs.new_turns: one INSERT per table, the agent,
    groups, toolset and model read once per person and agent rather than per firing) and their ScheduleRuns written
    in one UPDATE; every other firing (a thread that grows, an owner deactivated or with a daily budget, an agent lost
    or one that lists tools its owner may no longer use, a turn opened before by a process that died) goes through
    open_firing, one by one, as before. Each firing's outcome, by id, in `job_ids`' order."""
    jobs = ScheduleRun.objects.select_related("schedule", "schedule__owner").filter(pk__in=job_ids)
    new = [job for job in jobs if job.schedule.target == Schedule.Target.NEW and job.schedule.owner.is_active]
    # A firing whose agent lists tools its owner lost goes through open_firing, which pauses its schedule naming them.
    losing = owners_losing_tools({(job.schedule.owner_id, job.schedule.agent): job.schedule.owner for job in new})
    new = [job for job in new if (job.schedule.owner_id, job.schedule.agent) not in losing]
    asked = [
        Asked(
            user=job.schedule.owner,
            agent=job.schedule.agent,
            content=fill(job.schedule.prompt, job.slot, job.schedule.time_zone),
            client_msg_id=job.client_msg_id,
        )
        for job in new
    ]
    opened: dict[int, Opened] = {}
    if asked:
        turns = open_new_turns(asked, source=Source.SCHEDULE, taken_by=inbox)
        started = {new[index].pk: turn for index, (turn, _) in turns.items()}
        if started:
            ScheduleRun.objects.filter(pk__in=list(started)).update(
                status=ScheduleRun.Status.STARTED,
                error="",
                thread_id=_per_row({pk: t.thread.pk for pk, t in started.items()}, UUIDField()),
                run_id=_per_row({pk: t.run.pk for pk, t in started.items()}, IntegerField()),
            )
        for index, (turn, setup) in turns.items():
            opened[new[index].pk] = Opened(ScheduleRun.Status.STARTED, turn, setup)
    return [(job_id, opened[job_id] if job_id in opened else open_firing(job_id, inbox)) for job_id in job_ids]


def _per_row(values: dict, field) -> Case:
    """A column's value per row of one UPDATE, by primary key."""
    return Case(*(When(pk=pk, then=Value(value)) for pk, value in values.items()), output_field=field)


def firing_threads() -> ThreadPoolExecutor:
    """The thread firings open their turns on, not the one database thread every run of the process queues its reads
    and writes on: 200 firings at once queued there behind each other's trips and the started runs' (prepare, open,
    finish, then the run's own), and the last run's model request came 20 to 24 s after its slot (docs/performance.md,
    P35). One (FIRING_THREADS), a connection of the process's pool while it works; made on first use and kept by the
    schedules app for the process's lifetime."""
    config = apps.get_app_config("schedules")
    if config.firing_executor is None:
        config.firing_executor = ThreadPoolExecutor(max_workers=FIRING_THREADS, thread_name_prefix="schedule-firing")
    return config.firing_executor


async def fire(job_id: int) -> str:
    """Open the turn of a claimed firing and start its run in this process; its ScheduleRun says how it went.
    Returns the status. The processes that fire are those that run runs (a run worker, or a Daphne process
    without workers): the run starts here rather than going through the runs channel to be read back."""
    await runs.ensure_recovered()
    inbox = await placement().inbox_address()
    trip = database_sync_to_async(open_firing, thread_sensitive=False, executor=firing_threads())
    opened = await trip(job_id, inbox)
    await start_opened(opened, inbox)
    return opened.status


async def fire_claim(job_ids: list[int]) -> list[str]:
    """fire for a claim's firings together: their turns opened in one trip (open_firings), then their runs started
    here one after another, the event loop let go between two, so that the runs started first stream meanwhile (and
    this process's sockets are served). Each firing's status, in order."""
    await runs.ensure_recovered()
    inbox = await placement().inbox_address()
    trip = database_sync_to_async(open_firings, thread_sensitive=False, executor=firing_threads())
    statuses = []
    for job_id, opened in await trip(job_ids, inbox):
        try:
            await start_opened(opened, inbox)
        except Exception as error:
            log.exception("schedule run %s could not be started", job_id)
            await _failed(job_id, error)
            statuses.append(ScheduleRun.Status.FAILED)
            continue
        statuses.append(opened.status)
        await asyncio.sleep(0)
    return statuses


async def start_opened(opened: Opened, inbox: str) -> None:
    if opened.turn is not None:
        turn = opened.turn
        if turn.unarchived:
            await tell_user(turn.thread.owner_id, events.thread_archived(str(turn.thread.pk), False))
        if turn.awaiting:
            await announce_waiting(turn)
        else:
            await start_here(turn, setup=opened.setup, taken_as=inbox)


async def fire_claim_safely(job_ids: list[int]) -> list[str]:
    """fire_claim; when the claim's trip itself fails, each firing is tried alone (fire_safely), so that one bad
    firing fails alone."""
    try:
        return await fire_claim(job_ids)
    except Exception:
        log.exception("schedule runs %s could not be opened together; tried one by one", job_ids)
        return [await fire_safely(job_id) for job_id in job_ids]


async def _failed(job_id: int, error: Exception) -> None:
    try:
        await db(finish)(job_id, ScheduleRun.Status.FAILED, error=f"Could not start: {type(error).__name__}")
    except Exception:
        log.exception("schedule run %s: its failure could not be written", job_id)


async def fire_safely(job_id: int) -> str:
    try:
        return await fire(job_id)
    except Exception as error:
        log.exception("schedule run %s could not be started", job_id)
        await _failed(job_id, error)
        return ScheduleRun.Status.FAILED
