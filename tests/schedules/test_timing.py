"""When a schedule is due next: cron slots read in the schedule's zone (across summer time), every N minutes kept in
rhythm from the slot last due, and the common forms said in words."""

from datetime import UTC, datetime, timedelta

import pytest

from schedules.timing import BadTiming, check_cron, in_words, next_slot


def cron_after(expression: str, zone: str, after: datetime) -> datetime:
    return next_slot(kind="cron", cron=expression, time_zone=zone, every_minutes=None, after=after)


def test_a_daily_slot_is_read_in_the_schedules_zone():
    # 09:00 in New York is 14:00 UTC in winter, 13:00 UTC in summer.
    assert cron_after("0 9 * * *", "America/New_York", datetime(2026, 1, 10, 15, tzinfo=UTC)) == datetime(
        2026, 1, 11, 14, tzinfo=UTC
    )
    assert cron_after("0 9 * * *", "America/New_York", datetime(2026, 7, 10, 15, tzinfo=UTC)) == datetime(
        2026, 7, 11, 13, tzinfo=UTC
    )


def test_across_the_spring_change_a_daily_slot_keeps_its_local_time():
    # Berlin moves to summer time on 29 March 2026 at 02:00 (UTC+1 → UTC+2): 08:00 local is 07:00 UTC, then 06:00.
    first = cron_after("0 8 * * *", "Europe/Berlin", datetime(2026, 3, 28, 12, tzinfo=UTC))
    second = cron_after("0 8 * * *", "Europe/Berlin", first)
    assert (first, second) == (datetime(2026, 3, 29, 6, tzinfo=UTC), datetime(2026, 3, 30, 6, tzinfo=UTC))
    assert second - first == timedelta(days=1)


def test_a_slot_in_the_skipped_hour_fires_once_that_night():
    # 02:30 does not exist in Berlin on 29 March 2026: it fires once, read at the winter offset (03:30 local, 01:30
    # UTC), then at 02:30 again.
    after = datetime(2026, 3, 28, 12, tzinfo=UTC)
    slots = []
    for _ in range(3):
        after = cron_after("30 2 * * *", "Europe/Berlin", after)
        slots.append(after)
    assert slots == [
        datetime(2026, 3, 29, 1, 30, tzinfo=UTC),
        datetime(2026, 3, 30, 0, 30, tzinfo=UTC),
        datetime(2026, 3, 31, 0, 30, tzinfo=UTC),
    ]


def test_a_slot_in_the_repeated_hour_fires_once_that_night():
    # 02:30 happens twice in Berlin on 25 October 2026 (UTC+2 → UTC+1): one firing, not two.
    after = datetime(2026, 10, 24, 12, tzinfo=UTC)
    slots = []
    for _ in range(3):
        after = cron_after("30 2 * * *", "Europe/Berlin", after)
        slots.append(after)
    assert slots == [
        datetime(2026, 10, 25, 0, 30, tzinfo=UTC),
        datetime(2026, 10, 26, 1, 30, tzinfo=UTC),
        datetime(2026, 10, 27, 1, 30, tzinfo=UTC),
    ]


def test_from_inside_the_repeated_hour_the_slot_already_fired_is_not_fired_again():
    # 01:15 UTC is 02:15 the second time round (UTC+1); 02:30 fired at its first pass (00:30 UTC).
    assert cron_after("30 2 * * *", "Europe/Berlin", datetime(2026, 10, 25, 1, 15, tzinfo=UTC)) == datetime(
        2026, 10, 26, 1, 30, tzinfo=UTC
    )


def test_the_next_slot_is_strictly_after_the_moment_given():
    on_slot = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    assert cron_after("*/15 * * * *", "UTC", on_slot) == datetime(2026, 5, 1, 10, 15, tzinfo=UTC)


def test_every_n_minutes_keeps_its_rhythm_and_skips_what_was_missed():
    anchor = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    late = anchor + timedelta(minutes=47)  # three slots of 15 minutes missed while the deployment was down
    found = next_slot(kind="every", cron="", time_zone="UTC", every_minutes=15, after=late, anchor=anchor)
    assert found == anchor + timedelta(minutes=60)
    fresh = next_slot(kind="every", cron="", time_zone="UTC", every_minutes=15, after=anchor)
    assert fresh == anchor + timedelta(minutes=15)


@pytest.mark.parametrize(
    "expression",
    ["", "* * * *", "* * * * * *", "61 * * * *", "x y z w v", "* " * 60],
)
def test_what_is_not_five_cron_fields_is_refused(expression):
    with pytest.raises(BadTiming):
        check_cron(expression)


def test_an_unknown_zone_is_refused():
    with pytest.raises(BadTiming, match="not a time zone"):
        cron_after("0 9 * * *", "Mars/Olympus", datetime(2026, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("kind", "cron", "every", "words"),
    [
        ("every", "", 30, "every 30 minutes"),
        ("cron", "*/10 * * * *", None, "every 10 minutes"),
        ("cron", "5 * * * *", None, "every hour at :05"),
        ("cron", "0 9 * * *", None, "every day at 09:00 (Europe/Paris)"),
        ("cron", "30 8 * * 1-5", None, "on weekdays at 08:30 (Europe/Paris)"),
        ("cron", "0 18 * * 5", None, "every Friday at 18:00 (Europe/Paris)"),
        ("cron", "0 7 1 * *", None, "on day 1 of every month at 07:00 (Europe/Paris)"),
        ("cron", "0 9 1-7 * 1", None, None),
    ],
)
def test_common_forms_are_said_in_words(kind, cron, every, words):
    assert in_words(kind, cron, "Europe/Paris", every) == words
