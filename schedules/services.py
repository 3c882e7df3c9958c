"""Making and changing schedules, for the pages, the admin and `manage.py schedules`: each checks what it is given
and sets the next slot, so that a schedule is never saved with a time it cannot keep."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils import timezone

from agents.services import pick_by_slug

from .firing import slot_after
from .models import Schedule
from .timing import BadTiming, check_cron, check_every, zone_of


def checked(schedule: Schedule) -> Schedule:
    """ValidationError (by field) unless the schedule can be kept: an agent its owner may pick, a cron expression
    and a zone croniter and zoneinfo read, or an interval. Sets next_run_at when the timing changed or is unset."""
    errors = {}
    if schedule.owner_id is not None and pick_by_slug(schedule.owner, schedule.agent) is None:
        errors["agent"] = f"{schedule.agent[:60]!r} is not an agent this person can use."
    if not schedule.prompt.strip():
        errors["prompt"] = "Say what the agent is asked."
    try:
        if schedule.kind == Schedule.Kind.CRON:
            schedule.cron = check_cron(schedule.cron)
            zone_of(schedule.time_zone)
            schedule.every_minutes = None
        else:
            schedule.every_minutes = check_every(schedule.every_minutes)
    except BadTiming as error:
        errors["cron" if schedule.kind == Schedule.Kind.CRON else "every_minutes"] = str(error)
    if errors:
        raise ValidationError(errors)
    return schedule


def timing_of(schedule: Schedule) -> tuple:
    return (schedule.kind, schedule.cron, schedule.time_zone, schedule.every_minutes)


def save(schedule: Schedule, *, timing_before: tuple | None = None) -> Schedule:
    """Check and save; the next slot is counted from now when the timing is new or changed."""
    checked(schedule)
    if schedule.next_run_at is None or timing_before != timing_of(schedule):
        schedule.next_run_at = slot_after(schedule, timezone.now())
    schedule.save()
    return schedule


def pause(schedule: Schedule, reason: str = "Paused by hand.") -> None:
    Schedule.objects.filter(pk=schedule.pk).update(paused=True, pause_reason=reason)


def resume(schedule: Schedule) -> None:
    """Paused schedules do not catch up: the next slot is the first after now."""
    schedule.refresh_from_db()
    Schedule.objects.filter(pk=schedule.pk).update(
        paused=False, pause_reason="", next_run_at=slot_after(schedule, timezone.now())
    )
