"""The notifier: records each event a run tells (chat/notify.py), then sends what a person's window gathered.

Off the run's path: `submit` only hands the event to this process's threads and returns; the run's event loop never
waits for the database or the network here. Each event is recorded once (Event.key is unique: the same event told
twice, by this process or another, gives one row), for its thread's owner, when that person chose a channel: an event
whose owner the run named and who has no channel for it is dropped before any statement (audience.py). The
first event of a person starts a timer of AGENTWEB_NOTIFY_WINDOW seconds; when it fires, the person's unsent events
are claimed in one transaction (SELECT … FOR UPDATE SKIP LOCKED, so two processes never send the same events) and go
out as one notification per channel (of the events that channel tells: Preference.events): fifty calls waiting in one
burst make one notification that says fifty. A webhook answering 5xx, or not reached, is tried again with backoff."""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.utils import timezone

from chat.models import Thread
from chat.notify import RunEvent

from . import channels
from .audience import Audience
from .message import Notification, compose
from .models import Event, Preference, PushSubscription

log = logging.getLogger("agentweb.notify")

#: The most events one notification is made of (the rest wait for the next window).
MAX_EVENTS_PER_NOTIFICATION = 1000
#: The longest wait between two attempts of a webhook delivery, whatever the backoff setting.
MAX_BACKOFF_SECONDS = 300.0


def backoff(attempt: int) -> float:
    """Seconds before attempt `attempt + 1`: the setting, doubled for each attempt after the first."""
    base = max(0.0, float(settings.AGENTWEB_NOTIFY_WEBHOOK_BACKOFF))
    return min(MAX_BACKOFF_SECONDS, base * 2 ** (attempt - 1))


class Dispatcher:
    def __init__(self, *, window: float | None = None, workers: int | None = None, audience: Audience | None = None):
        self._window = window
        if workers is None:  # SQLite takes one writer at a time: one thread here, rather than "table is locked"
            workers = 1 if connection.vendor == "sqlite" else 2
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="notify")
        self._lock = threading.Lock()
        self._timers: dict[int, threading.Timer] = {}  # per person: the window that is open
        self._pending: set[Future] = set()
        self._retries: set[threading.Timer] = set()  # webhook deliveries to try again
        self._audience = audience or Audience()  # who has a channel on, per kind of event

    @property
    def window(self) -> float:
        """Seconds a person's events gather before they go out (None at construction: the setting, read each time)."""
        return max(0.0, float(settings.AGENTWEB_NOTIFY_WINDOW if self._window is None else self._window))

    # --- from the run (any thread, any event loop) ---------------------------------

    def submit(self, event: RunEvent) -> None:
        self._start(self._record, event)

    # --- on the notifier's threads ----------------------------------------------------

    def _start(self, work, *args) -> None:
        future = self._pool.submit(self._in_thread, work, *args)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._done)

    def _done(self, future: Future) -> None:
        with self._lock:
            self._pending.discard(future)

    def _in_thread(self, work, *args) -> None:
        if work == self._record and self._nobody_told(*args):
            return  # no channel of the person's tells it: no connection taken, no statement
        close_old_connections()
        try:
            work(*args)
        except Exception:
            log.exception("notification work failed")
        finally:
            connection.close()  # a pool thread keeps no connection between jobs

    def _nobody_told(self, event: RunEvent) -> bool:
        """The run named the thread's owner and they have no channel on that tells this kind of event (most people
        in a burst of scheduled runs). Not known (no owner named, Redis out of reach): False, and the event is
        recorded or dropped by its thread's and preference's rows, as always."""
        if event.owner_id is None:
            return False
        try:
            return self._audience.told(event.owner_id, event.kind) is False
        except Exception:
            log.exception("who is told of notifications could not be read")
            return False
        finally:
            connection.close()  # the audience's read, when it read, keeps no connection either

    def _record(self, event: RunEvent) -> None:
        thread = Thread.objects.select_related("agent").filter(pk=event.thread_id).first()
        if thread is None:
            return
        preference = Preference.objects.filter(user_id=thread.owner_id).first()
        if preference is None or not preference.channels_for(event.kind):
            return  # no channel of the person's tells this kind of event: nothing to record
        try:
            with transaction.atomic():
                Event.objects.create(
                    key=event.key[:200],
                    user_id=thread.owner_id,
                    kind=event.kind,
                    thread_id=thread.pk,
                    thread_title=thread.title[:200],
                    agent=(thread.agent.name if thread.agent else "")[:100],
                    tool=event.tool[:200],
                    run_id=event.run_id,
                )
        except IntegrityError:  # told before: it is (or was) in a notification already
            return
        self._open_window(thread.owner_id)

    def _open_window(self, user_id: int) -> None:
        window = self.window
        if window == 0:
            self._flush(user_id)
            return
        with self._lock:
            if user_id in self._timers:
                return
            timer = threading.Timer(window, self._window_closed, args=(user_id,))
            timer.daemon = True
            self._timers[user_id] = timer
        timer.start()

    def _window_closed(self, user_id: int) -> None:
        with self._lock:
            self._timers.pop(user_id, None)
        self._start(self._flush, user_id)

    def _flush(self, user_id: int) -> None:
        with transaction.atomic():
            claimed = list(
                Event.objects.select_for_update(skip_locked=True)
                .filter(user_id=user_id, sent_at__isnull=True)
                .order_by("created_at", "pk")[:MAX_EVENTS_PER_NOTIFICATION]
            )
            if not claimed:
                return
            Event.objects.filter(pk__in=[e.pk for e in claimed]).update(sent_at=timezone.now())
        if len(claimed) == MAX_EVENTS_PER_NOTIFICATION:
            self._open_window(user_id)  # more are waiting: the next window takes them
        self._send(user_id, claimed)

    def _send(self, user_id: int, events: list[Event]) -> None:
        """One notification per channel, of the events that channel tells (Preference.events)."""
        preference = Preference.objects.select_related("user").filter(user_id=user_id).first()
        if preference is None:
            return
        composed: dict[frozenset[str], Notification | None] = {}

        def notification_for(channel: str) -> Notification | None:
            kinds = preference.kinds_of(channel)
            if kinds not in composed:
                told = [event for event in events if event.kind in kinds]
                composed[kinds] = compose(told, settings.AGENTWEB_PUBLIC_URL) if told else None
            return composed[kinds]

        if preference.email and (notification := notification_for("email")):
            self._try("email", user_id, lambda: channels.send_email(preference.user, notification))
        if preference.webhook and preference.webhook_url and (notification := notification_for("webhook")):
            delivery = uuid.uuid4().hex
            self._webhook(user_id, preference.webhook_url, preference.webhook_secret, notification, delivery, 1)
        if preference.push and (notification := notification_for("push")):
            for subscription in PushSubscription.objects.filter(user_id=user_id):
                status = self._try("push", user_id, lambda s=subscription: channels.send_push(s, notification))
                if status in channels.GONE:
                    subscription.delete()

    def _webhook(self, user_id: int, url: str, secret: str, notification, delivery: str, attempt: int) -> None:
        """Deliver to the person's webhook; a 5xx answer or a failed connection is tried again later, with the same
        X-Agentweb-Delivery id (the receiver can tell a retry from a new notification), up to
        AGENTWEB_NOTIFY_WEBHOOK_ATTEMPTS in all, waiting AGENTWEB_NOTIFY_WEBHOOK_BACKOFF seconds, then twice as long
        each time. Anything else (a 4xx, an address the SSRF guard refuses) is not tried again: it would fail the
        same way."""
        try:
            status = channels.send_webhook(url, secret, notification, delivery=delivery)
        except channels.RETRYABLE as error:
            reason = type(error).__name__
        except Exception as error:  # the error's type only: its text may quote an address or an answer
            log.warning("notification by webhook to person %s failed: %s", user_id, type(error).__name__)
            return
        else:
            if 200 <= status < 300:
                return
            if status < 500:
                log.warning("notification by webhook to person %s answered %s", user_id, status)
                return
            reason = f"status {status}"
        attempts = max(1, int(settings.AGENTWEB_NOTIFY_WEBHOOK_ATTEMPTS))
        if attempt >= attempts:
            log.warning("notification by webhook to person %s failed after %s attempts: %s", user_id, attempt, reason)
            return
        delay = backoff(attempt)
        log.info("notification by webhook to person %s: %s, trying again in %.1fs", user_id, reason, delay)
        self._later(delay, self._webhook, user_id, url, secret, notification, delivery, attempt + 1)

    def _later(self, delay: float, work, *args) -> None:
        """`work(*args)` on the notifier's threads after `delay` seconds (kept, so that wait_idle sees it)."""

        def due() -> None:
            with self._lock:
                self._retries.discard(timer)
            self._start(work, *args)

        timer = threading.Timer(delay, due)
        timer.daemon = True
        with self._lock:
            self._retries.add(timer)
        timer.start()

    @staticmethod
    def _try(channel: str, user_id: int, send):
        try:
            return send()
        except Exception as error:  # the error's type only: its text may quote an address or an answer
            log.warning("notification by %s to person %s failed: %s", channel, user_id, type(error).__name__)
            return None

    # --- for tests and a clean stop -----------------------------------------------------

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no window is open and no work is pending; False if `timeout` passed first."""
        deadline = timezone.now().timestamp() + timeout
        while timezone.now().timestamp() < deadline:
            with self._lock:
                busy = list(self._pending)
                open_windows = bool(self._timers) or bool(self._retries)
            if not busy and not open_windows:
                return True
            for future in busy:
                with contextlib.suppress(Exception):
                    future.result(timeout=max(0.0, deadline - timezone.now().timestamp()))
            if open_windows:
                threading.Event().wait(0.05)
        return False
