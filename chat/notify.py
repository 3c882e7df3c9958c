"""What the run layer tells the notifications app (notifications/, docs/background.md): a call waits
for approval, a tool asks for input, a run failed, a scheduled or triggered run finished.

chat/ never imports the notifications app: the app hands its `submit` to the chat app's config as it starts
(NotificationsConfig.ready), and each event here is one call that returns at once (the sending is done on the
notifier's own threads, off the run's path). Without the app installed, nothing is told. An event carries names and
ids only, never a call's arguments or a result."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from django.apps import apps

log = logging.getLogger("agentweb.notify")

APPROVAL = "approval"
INPUT = "input"
FAILED = "failed"
FINISHED = "finished"


@dataclass(frozen=True)
class RunEvent:
    kind: str  # APPROVAL, INPUT, FAILED, FINISHED
    key: str  # the same event told twice has the same key (the notifier keeps one)
    thread_id: uuid.UUID
    run_id: int
    tool: str = ""
    # The thread's owner, when the run knows it: the notifier then skips the event of a person with no channel for
    # it before any statement (notifications/audience.py). None: read from the thread.
    owner_id: int | None = None


def tell(event: RunEvent) -> None:
    """Hand `event` to the notifier, if one is installed; never raises (a notification never stops a run)."""
    submit = getattr(apps.get_app_config("chat"), "notifier", None)
    if submit is None:
        return
    try:
        submit(event)
    except Exception:
        log.exception("notification of %s %s not handed over", event.kind, event.key)


def calls_wait(
    thread_id: uuid.UUID, run_id: int, calls: Iterable[tuple[str, str]], *, owner_id: int | None = None
) -> None:
    """Each (tool call id, tool name) waits for a person's approval."""
    for call_id, tool in calls:
        tell(RunEvent(APPROVAL, f"approval:{call_id}", thread_id, run_id, tool, owner_id))


def input_requested(
    thread_id: uuid.UUID, run_id: int, request_id: str, tool: str, *, owner_id: int | None = None
) -> None:
    tell(RunEvent(INPUT, f"input:{request_id}", thread_id, run_id, tool, owner_id))


def run_failed(thread_id: uuid.UUID, run_id: int, *, owner_id: int | None = None) -> None:
    tell(RunEvent(FAILED, f"failed:{run_id}", thread_id, run_id, owner_id=owner_id))


def run_finished(thread_id: uuid.UUID, run_id: int, *, owner_id: int | None = None) -> None:
    """A run a schedule or a trigger started completed (the caller checks its source)."""
    tell(RunEvent(FINISHED, f"finished:{run_id}", thread_id, run_id, owner_id=owner_id))
