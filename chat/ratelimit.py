"""A token bucket per user: bursts are fine, a flood of messages is not."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class RateLimiter:
    per_minute: float
    burst: int
    _buckets: dict[object, tuple[float, float]] = field(default_factory=dict)

    def allow(self, key: object, *, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        tokens, last = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.per_minute / 60)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1, now)
        return True
