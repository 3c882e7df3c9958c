"""Who opens a turn, and through what: a browser tab (its session) or a program (an API key, api/auth.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from .access import current_user
from .models import Source


@dataclass(frozen=True)
class Caller:
    """`current` re-reads the person as the turn is written (None once they signed out, or the key was revoked);
    `source` marks the thread a turn starts and its run (Thread.source); `api_key_id` is kept with the run and its
    usage rows."""

    current: Callable[[], object]
    source: str = Source.CHAT
    api_key_id: int | None = None

    @classmethod
    def session(cls, session_key: str | None) -> Caller:
        return cls(current=partial(current_user, session_key))
