"""How many deliveries a trigger takes per minute: a token bucket per trigger (chat/ratelimit.py's), across every
process when they share Redis (its check and take are one atomic script there), so two deliveries at once cannot
both pass on the last token."""

from __future__ import annotations

from django.apps import apps

from chat.ratelimit import RateLimiter, SharedRateLimiter


class TriggerLimiter(SharedRateLimiter):
    def _key(self, key: object) -> str:
        return f"{self.prefix}:trigger-rate:{key}"


def trigger_limiter(settings) -> RateLimiter | TriggerLimiter:
    per_minute = settings.AGENTWEB_HOOK_RATE_PER_MINUTE
    burst = settings.AGENTWEB_HOOK_BURST or per_minute
    if settings.REDIS_URL:
        prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"].get("prefix", "agentweb")
        return TriggerLimiter(per_minute, burst, settings.REDIS_URL, prefix)
    return RateLimiter(per_minute, burst)


def delivery_limit() -> RateLimiter | TriggerLimiter:
    """The process's limit, made by hooks/apps.py as the app starts."""
    return apps.get_app_config("hooks").delivery_limit
