"""The text of the answers streaming in this process, written every AGENTWEB_FLUSH_INTERVAL (2 s) for all of them in
one statement: crash safety.

An answer's text is written when it ends (chat/recorder.py). A process killed meanwhile (kill -9, a power cut) keeps
only what was written before: in one process (`make run`, no Redis to read the deltas back from) that was nothing
for any answer under the old 30 s flush. Here one task per process wakes twice an interval and writes, for each
answer that has streamed an interval since it began or was last written, and been shown more since, the text its
tabs were shown: a kill loses at most an interval and a half of it, and the restarted process marks the run
interrupted with that text (chat/runs/recovery.py). A turn whose answer ends within the interval gains no
statement, and the per-token path none at all: the text is read from the recorder when the task wakes. The answers
due together share one statement, as the heartbeat is one for all the runs (chat/runs/heartbeat.py): 200 streams
of a worker would otherwise write 100 times a second.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from channels.db import database_sync_to_async
from django.apps import apps
from django.conf import settings

from . import store

log = logging.getLogger("agentweb.runs")


class Streaming(Protocol):
    def text_to_keep(self, now: float) -> tuple[int, str] | None:
        """(message id, text) when the streaming answer's shown text should be written now, else None."""


def keep_text(run_id: int, recorder: Streaming) -> None:
    """The run's streaming answer is written every interval from now until forget_text."""
    apps.get_app_config("chat").text_flush.add(run_id, recorder)


def forget_text(run_id: int) -> None:
    """The run's answer ended (it was written then). The last one of the loop stops the task."""
    apps.get_app_config("chat").text_flush.discard(run_id)


async def flush_every_interval(recorders: dict[int, Streaming]) -> None:
    """The task of a loop's streaming answers (chat/per_loop.py; made by chat/apps.py)."""
    while True:
        # Twice an interval: an answer is written within half an interval of its due time, each at most once an
        # interval, and the process's answers that are due together in one statement.
        await asyncio.sleep(settings.AGENTWEB_FLUSH_INTERVAL / 2)
        now = time.monotonic()
        texts = dict(kept for recorder in list(recorders.values()) if (kept := recorder.text_to_keep(now)))
        if not texts:
            continue
        try:
            await database_sync_to_async(store.save_streaming_texts)(texts=texts)
        except Exception:  # the database out of reach for a moment: the next flush writes the text as it is then
            log.exception("the text of %d streaming answer(s) could not be written", len(texts))
