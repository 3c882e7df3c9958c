"""The current date and time in a given time zone: models have no clock of their own."""

from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tools.base import tool

# Fixed English names: strftime("%A") would follow the server's locale.
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@tool
def current_time(timezone: str = "UTC") -> str:
    """Get the current date and time in an IANA time zone.

    Args:
        timezone: An IANA time zone name such as "Europe/Paris", "America/New_York" or "UTC".
    """
    now = _now(_zone(timezone))
    return f"{now.isoformat(timespec='seconds')} ({timezone}, {_WEEKDAYS[now.weekday()]})"


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    # Not found, malformed keys ("../x", absolute paths) and directories ("America") all mean the same here.
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"Unknown time zone {name!r}. Use an IANA name such as 'Europe/Paris'.") from None


def _now(zone: tzinfo) -> datetime:
    """The current time; a separate function so tests can pin the clock."""
    return datetime.now(zone)
