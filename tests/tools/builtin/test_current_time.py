from datetime import datetime, tzinfo

import pytest

from tools.builtin import current_time as module
from tools.builtin.current_time import current_time


@pytest.fixture
def frozen_clock(monkeypatch):
    """2026-11-22 04:10:03 UTC, a Sunday."""
    instant = datetime.fromisoformat("2026-11-22T04:10:03.123456+00:00")

    def now(zone: tzinfo) -> datetime:
        return instant.astimezone(zone)

    monkeypatch.setattr(module, "_now", now)


def test_it_defaults_to_utc(frozen_clock):
    assert current_time() == "2026-11-22T04:10:03+00:00 (UTC, Sunday)"


def test_it_converts_to_the_requested_zone(frozen_clock):
    assert current_time("Europe/Paris") == "2026-11-22T05:10:03+01:00 (Europe/Paris, Sunday)"


def test_it_reports_the_weekday_of_the_zone_not_of_utc(frozen_clock):
    assert current_time("America/Los_Angeles") == "2026-11-21T20:10:03-08:00 (America/Los_Angeles, Saturday)"


@pytest.mark.parametrize("zone", ["Mars/Olympus", "America", "../etc/passwd", "/etc/localtime", ""])
def test_it_refuses_an_unknown_zone_with_a_hint(zone):
    with pytest.raises(ValueError, match=r"Unknown time zone .*Use an IANA name such as 'Europe/Paris'\."):
        current_time(zone)


def test_it_reads_the_real_clock():
    before = datetime.now().astimezone()

    stamp = datetime.fromisoformat(current_time("UTC").split(" ")[0])

    assert abs((stamp - before).total_seconds()) < 5
