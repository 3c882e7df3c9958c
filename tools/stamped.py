"""What a process keeps under one settings stamp (tools.models.SettingsStamp), by key.

Every save or delete of what the settings are made of gives the stamp a new value in the same transaction
(tools/apps.py, agents/apps.py), so an answer read after the stamp and kept under it is never older than the stamp
says: a run or a page that read the stamp can take it from here rather than from the database (tool sets, agents,
model configurations, a person's groups and picker). A new stamp forgets every answer; so does reaching `size` of
them (a bound, not an eviction policy: they are rebuilt as asked)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any


class StampedAnswers:
    def __init__(self, size: int) -> None:
        self.size = size
        self._stamp: str | None = None
        self._answers: dict[Hashable, Any] = {}
        self._lock = threading.Lock()  # page views run on several threads

    def get(self, stamp: str | None, key: Hashable, make: Callable[[], Any]) -> Any:
        """The answer kept for `key` under `stamp`, else `make()` (kept). No stamp (None): `make()`, not kept."""
        if stamp is None:
            return make()
        with self._lock:
            if self._stamp != stamp:
                self._stamp, self._answers = stamp, {}
            if key in self._answers:
                return self._answers[key]
        answer = make()
        with self._lock:
            if self._stamp == stamp:
                if len(self._answers) >= self.size:
                    self._answers.clear()
                self._answers[key] = answer
        return answer
