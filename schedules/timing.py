"""When a schedule is due: the next slot of a cron expression in its time zone (croniter), or of every N minutes, and
the schedule's times in words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

#: Limits checked before croniter reads anything.
CRON_CHARS = 100
MOST_MINUTES = 366 * 24 * 60
DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class BadTiming(ValueError):
    """A cron expression, zone or interval that cannot be used; the message says why."""


def zone_of(name: str) -> ZoneInfo:
    if not name or len(name) > 64:
        raise BadTiming("Give an IANA time zone, such as Europe/Berlin.")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadTiming(f"{name[:64]!r} is not a time zone (an IANA name, such as Europe/Berlin).") from None


def check_cron(expression: str) -> str:
    """The expression, its spaces tidied; BadTiming unless it is five cron fields croniter reads (no seconds field:
    a schedule fires at most once a minute)."""
    if len(expression) > CRON_CHARS:
        raise BadTiming(f"A cron expression has at most {CRON_CHARS} characters.")
    fields = expression.split()
    if len(fields) != 5 or not croniter.is_valid(" ".join(fields)):
        raise BadTiming(
            f"{expression[:CRON_CHARS]!r} is not a cron expression of five fields (minute hour day month weekday)."
        )
    return " ".join(fields)


def check_every(minutes: int | None) -> int:
    if minutes is None or not 1 <= minutes <= MOST_MINUTES:
        raise BadTiming(f"Every N minutes takes N from 1 to {MOST_MINUTES}.")
    return minutes


def next_slot(
    *, kind: str, cron: str, time_zone: str, every_minutes: int | None, after: datetime, anchor=None
) -> datetime:
    """The first slot strictly after `after` (UTC). Every N minutes counts from `anchor` (the slot last due), so a
    schedule keeps its rhythm; without one, from `after`. Cron slots are read in the schedule's zone, each
    wall-clock time once, across the changes of summer time."""
    if kind == "every":
        step = timedelta(minutes=check_every(every_minutes))
        if anchor is None or anchor > after:
            return (anchor if anchor is not None else after + step).astimezone(UTC)
        missed = (after - anchor) // step + 1
        return (anchor + missed * step).astimezone(UTC)
    # Walked in the zone's wall-clock time, naive: croniter given aware times fires twice in the hour that autumn
    # repeats (02:30 at UTC+2, then again at UTC+1). A wall time is taken at its first occurrence (fold 0), and one
    # not after `after` (the repeated hour's second pass) is skipped; a wall time the spring change skips is read
    # with the offset before the change (02:30 → 03:30), once.
    zone = zone_of(time_zone)
    walk = croniter(check_cron(cron), after.astimezone(zone).replace(tzinfo=None))
    for _ in range(4):
        found = walk.get_next(datetime).replace(tzinfo=zone).astimezone(UTC)
        if found > after:
            return found
    raise BadTiming("No next time found for this cron expression.")


def next_slots(schedule, count: int, now: datetime) -> list[datetime]:
    """The schedule's next `count` times from its next slot on (for the page)."""
    at = schedule.next_run_at or now
    slots = [at]
    while len(slots) < count:
        at = next_slot(
            kind=schedule.kind,
            cron=schedule.cron,
            time_zone=schedule.time_zone,
            every_minutes=schedule.every_minutes,
            after=at,
            anchor=at,
        )
        slots.append(at)
    return slots


def in_words(kind: str, cron: str, time_zone: str, every_minutes: int | None) -> str | None:
    """The common forms said in words; None for the rest (the page shows the expression and its next times)."""
    if kind == "every":
        return "every minute" if every_minutes == 1 else f"every {every_minutes} minutes"
    fields = cron.split()
    if len(fields) != 5:
        return None
    minute, hour, day, month, weekday = fields
    zone = f" ({time_zone})"
    if fields == ["*"] * 5:
        return "every minute"
    if minute.startswith("*/") and minute[2:].isdigit() and fields[1:] == ["*"] * 4:
        return f"every {int(minute[2:])} minutes"
    if not minute.isdigit() or month != "*":
        return None
    if hour == "*" and day == "*" and weekday == "*":
        return f"every hour at :{int(minute):02d}"
    if not hour.isdigit():
        return None
    at = f"at {int(hour):02d}:{int(minute):02d}{zone}"
    if day == "*" and weekday == "*":
        return f"every day {at}"
    if day == "*" and weekday in ("1-5", "MON-FRI", "mon-fri"):
        return f"on weekdays {at}"
    if day == "*" and weekday.isdigit() and int(weekday) <= 7:
        return f"every {DAYS[int(weekday)]} {at}"
    if weekday == "*" and day.isdigit():
        return f"on day {int(day)} of every month {at}"
    return None
