"""`GET /healthz`: can this process serve? For a load balancer's, systemd's or a container's health check.

It answers 200 `ok` once the database answers a `SELECT 1` and, where the process uses Redis (`REDIS_URL`), Redis
answers a `PING`; else 503 naming which did not answer, never how it was reached (addresses and credentials stay
out of the answer and the log). No sign-in, no session, no cookie; served over plain HTTP even where every other
address is redirected to HTTPS (SECURE_REDIRECT_EXEMPT), as checks run inside the network. The request must still
name one of the site's hosts (ALLOWED_HOSTS): docs/deploy.md shows the check with its Host header.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger("agentweb.health")

#: Seconds the check waits for Redis: a health check must answer well within its checker's own timeout.
REDIS_TIMEOUT_S = 2.0


@never_cache
@require_safe
def healthz(request) -> HttpResponse:
    failed = [name for name, answers in (("database", database_answers), ("redis", redis_answers)) if not answers()]
    if failed:
        return HttpResponse(f"{' and '.join(failed)} unavailable\n", status=503, content_type="text/plain")
    return HttpResponse("ok\n", content_type="text/plain")


def database_answers() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        logger.warning("Health check: the database did not answer (%s)", type(error).__name__)
        return False
    return True


def redis_answers() -> bool:
    """True without Redis configured (one process, the in-memory channel layer)."""
    if not settings.REDIS_URL:
        return True
    import redis

    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S
    )
    try:
        return bool(client.ping())
    except redis.RedisError as error:
        logger.warning("Health check: Redis did not answer (%s)", type(error).__name__)
        return False
    finally:
        client.close()
