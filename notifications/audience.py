"""Who may be told: per kind of event, the people with a channel on that tells it, read in one statement and kept
until a Preference is saved or deleted, so that the notifier skips an event of anyone else before it opens a
database connection.

A burst of scheduled runs tells the notifier of every run that finishes; most people have no channel, and each of
their events cost a connection taken from the pool and two statements on the notifier's threads, beside the runs
(docs/performance.md P37). Kept per process; a save or a delete anywhere must reach every process: the process that
saves forgets its own answer at once (the model's signals), and, where processes share Redis, counts a generation
there after the commit, which each process reads (one GET) before trusting its answer. Without Redis there is one
process serving (docs/deploy.md), and its own signals are enough. Preference rows are only written through the
model's save and delete (notifications/forms.py, views.py); a write that bypasses them (QuerySet.update,
bulk_create, raw SQL) must call the app's `generations.changed()`."""

from __future__ import annotations

import logging
import threading

from django.apps import apps
from django.conf import settings
from django.db import transaction

from .models import KINDS, Preference

log = logging.getLogger("agentweb.notify")

#: Seconds a GET of the shared generation may take before the notifier reads the database instead.
REDIS_TIMEOUT_S = 0.5


class Generations:
    """The process's count of Preference writes, and the one every process shares through Redis: an answer read
    before the last write is not trusted. One per process, kept by the notifications app (apps.py)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = 0
        self._client = None

    def changed(self) -> None:
        """A Preference was written: this process forgets its answer now, every process once the write commits."""
        self._bump()
        transaction.on_commit(self._committed)

    def now(self) -> tuple[int, bytes | None]:
        """This process's generation and the shared one (b"" where Redis has none yet; None without Redis)."""
        if not settings.REDIS_URL:
            return self._local, None
        try:
            return self._local, self._redis().get(self._key()) or b""
        except Exception:
            self._client = None  # made again at the next call
            raise

    def _bump(self) -> None:
        with self._lock:
            self._local += 1

    def _committed(self) -> None:
        self._bump()  # an answer read between the write and its commit saw the row before it
        if settings.REDIS_URL:
            try:
                self._redis().incr(self._key())
            except Exception as error:  # the others keep their answer until the next write: said loudly
                log.error("a change of channels was not told to the other processes: %s", type(error).__name__)
                self._client = None

    @staticmethod
    def _key() -> str:
        return f"{settings.AGENTWEB_REDIS_PREFIX}:notify-audience"

    def _redis(self):
        if self._client is None:
            import redis

            self._client = redis.Redis.from_url(
                settings.REDIS_URL, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S
            )
        return self._client


class Audience:
    """One process's answer to "who has a channel on for events of this kind" (thread-safe)."""

    def __init__(self, generations: Generations | None = None) -> None:
        self._generations = generations or apps.get_app_config("notifications").generations
        self._lock = threading.Lock()
        self._answer: dict[str, frozenset[int]] | None = None
        self._as_of: tuple[int, bytes | None] | None = None

    def told(self, user_id: int, kind: str) -> bool | None:
        """Whether `user_id` has a channel on that tells `kind`: True, False, or None when it cannot be said without
        the database's answer for this event (Redis out of reach, say)."""
        try:
            now = self._generations.now()
        except Exception as error:
            log.warning("who is told of notifications: Redis did not answer (%s)", type(error).__name__)
            return None
        with self._lock:
            answer = self._answer if self._as_of == now else None
        if answer is None:
            answer = self._read()
            with self._lock:
                self._answer, self._as_of = answer, now  # read after `now`: a later write gives a newer one
        return user_id in answer.get(kind, frozenset())

    @staticmethod
    def _read() -> dict[str, frozenset[int]]:
        """One statement: every preference with a channel on (most people have none)."""
        people: dict[str, set[int]] = {kind: set() for kind in KINDS}
        rows = Preference.objects.filter(push=True) | Preference.objects.filter(email=True)
        rows |= Preference.objects.filter(webhook=True)
        for preference in rows.only("user_id", "push", "email", "webhook", "events"):
            for kind in KINDS:
                if preference.channels_for(kind):
                    people[kind].add(preference.user_id)
        return {kind: frozenset(ids) for kind, ids in people.items()}
