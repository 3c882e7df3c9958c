"""The audit log: who did what, when, from where (docs/teams.md, "Audit log"). Every writer calls `audit.record`."""

from __future__ import annotations

from typing import NamedTuple

from .actions import DECISIONS, Action


class Target(NamedTuple):
    """What an action was done to when it is not a row at hand: its kind, id and a name to read."""

    type: str
    id: str = ""
    label: str = ""


def record(action: Action, **fields):
    """Write one event (audit/recording.py `record`, which says what `fields` may be); imported on first use so
    that any module may import `audit` while the apps load."""
    from .recording import record as write

    return write(action, **fields)


__all__ = ["DECISIONS", "Action", "Target", "record"]
