"""A token bucket per user: bursts are fine, a flood of messages is not.

With one process the buckets live in memory. With several (REDIS_URL), a person could otherwise send the
limit to each Daphne process in turn, so the buckets live in Redis, updated by one atomic script.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from django.apps import apps

log = logging.getLogger("agentweb.ratelimit")


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

    async def aallow(self, key: object) -> bool:
        return self.allow(key)

    def give_back(self, key: object) -> None:
        """A token taken for a frame that then made no model request (a decision that resumed nothing)."""
        if key in self._buckets:
            tokens, last = self._buckets[key]
            self._buckets[key] = (min(float(self.burst), tokens + 1), last)

    async def agive_back(self, key: object) -> None:
        self.give_back(key)


# KEYS[1]: the bucket; ARGV: burst, tokens per second, now (s), seconds an idle bucket is kept.
TAKE_TOKEN = """
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local burst, rate, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens, at = tonumber(bucket[1]) or burst, tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], ARGV[4])
return allowed
"""

# KEYS[1]: the bucket; ARGV: burst. A token back, never past the burst.
GIVE_BACK = """
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
if tokens then redis.call('HSET', KEYS[1], 'tokens', tostring(math.min(tonumber(ARGV[1]), tokens + 1))) end
return 0
"""


@dataclass
class SharedRateLimiter:
    """The same bucket, shared by every process through Redis. Should Redis not answer, each process
    limits on its own meanwhile (the channel layer is down too, so little gets through anyway)."""

    per_minute: float
    burst: int
    redis_url: str
    prefix: str = "agentweb"
    fallback: RateLimiter = field(init=False)

    def __post_init__(self):
        self.fallback = RateLimiter(self.per_minute, self.burst)
        self._client = None

    def _redis(self):
        if self._client is None:
            from redis.asyncio import Redis

            self._client = Redis.from_url(self.redis_url)
        return self._client

    async def aallow(self, key: object) -> bool:
        try:
            allowed = await self._redis().eval(
                TAKE_TOKEN,
                1,
                self._key(key),
                self.burst,
                self.per_minute / 60,
                time.time(),
                max(60, int(self.burst * 60 / max(self.per_minute, 1e-9)) + 60),
            )
            return bool(allowed)
        except Exception as error:  # any Redis failure: limit in this process instead
            log.warning("the shared rate limit is unavailable (%s); limiting per process", type(error).__name__)
            self._client = None
            return self.fallback.allow(key)

    async def agive_back(self, key: object) -> None:
        try:
            await self._redis().eval(GIVE_BACK, 1, self._key(key), self.burst)
        except Exception:  # the token stays spent: the limit errs on the safe side
            self._client = None
            self.fallback.give_back(key)

    def _key(self, key: object) -> str:
        return f"{self.prefix}:send-rate:{key}"


def send_limiter(settings) -> RateLimiter | SharedRateLimiter:
    """The limit of the frames that make a model request (message.send, run.retry, run.continue, run.regenerate,
    message.edit, message.edit_last, and a tool_call.decide that resumes its run): one bucket per user, across every
    process when they share Redis."""
    per_minute, burst = settings.AGENTWEB_SEND_RATE_PER_MINUTE, settings.AGENTWEB_SEND_BURST
    if settings.REDIS_URL:
        prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"].get("prefix", "agentweb")
        return SharedRateLimiter(per_minute, burst, settings.REDIS_URL, prefix)
    return RateLimiter(per_minute, burst)


def send_limit():
    """The process's send limit, made by chat/apps.py as the app starts (send_limiter)."""
    return apps.get_app_config("chat").send_limit
