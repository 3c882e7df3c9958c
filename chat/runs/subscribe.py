"""What a subscriber is sent first: the log's tail after its last event, or a snapshot, from the database or
from the run that streams (in this process or, on request, in another)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from .. import live, store
from ..models import Thread
from ..store import owners
from .recovery import ensure_recovered, single_process, stale_before
from .registry import ACTIVE_RUNS, ActiveRun, run_group

db = database_sync_to_async


# --- what a subscriber is sent first ------------------------------------------------------------


async def subscribe_texts(
    thread: Thread, after_seq: int | None, model: dict[str, Any], *, reply_to: str | None = None
) -> list[str] | None:
    """The events after `after_seq` when the thread's log still has them all, else a snapshot. The caller follows
    the thread's group first: events published meanwhile reach it too, and it drops those it already sent.

    None: the thread's run streams in another process, which sends the snapshot to `reply_to` itself, in order
    with the run's next events (a `thread.replayed` message).
    """
    await ensure_recovered()
    if after_seq is not None:
        texts = await live.read_after(thread.pk, after_seq)
        if texts is not None:
            return texts
    active = ACTIVE_RUNS.get(thread.pk)
    if active is not None:
        return await _live_snapshot_texts(thread, active, model)
    if single_process():
        return [await stored_snapshot_text(thread, model)]
    live_run = await db(owners.live_run)(thread_id=thread.pk, stale_before=stale_before())
    if reply_to and live_run is not None and live_run.owner:
        request = {"type": "run.replay", "thread": str(thread.pk), "model": model, "reply_to": reply_to}
        await get_channel_layer().group_send(run_group(thread.pk), request)
        return None
    # No run streams anywhere: the database holds the thread as of the log's last number.
    return [await stored_snapshot_text(thread, model)]


async def stored_snapshot_text(thread: Thread, model: dict[str, Any]) -> str:
    """The thread as the database holds it. The number is read first: every event up to it was written down
    before it was published, and an event after it that the snapshot holds already is one a tab applies again
    harmlessly (the events that do not repeat harmlessly, a stream's deltas, come only from a live run)."""
    seq = await live.last_seq(thread.pk)
    return json.dumps(await db(store.build_snapshot)(thread=thread, seq=seq, model=model), ensure_ascii=False)


async def _live_snapshot_texts(thread: Thread, active: ActiveRun, model: dict[str, Any]) -> list[str]:
    """The thread whose run streams in this process: the database's state with what the run holds laid over it,
    as of the run's last event, then the events published after that one. Nothing is written for it, and the
    stream goes on meanwhile."""
    view = active.recorder.live_view()
    if view is None:  # the run has published nothing yet: it holds nothing the database lacks
        return [await stored_snapshot_text(thread, model)]
    snapshot = await db(store.build_snapshot)(thread=thread, seq=view.seq, model=model)
    view.lay_over(snapshot)
    return [json.dumps(snapshot, ensure_ascii=False), *(await live.read_after(thread.pk, view.seq) or [])]


async def replay(thread_id: uuid.UUID, message: dict[str, Any]) -> None:
    """A subscriber on another process asks for the state of the thread whose run streams here."""
    thread = await Thread.objects.aget(pk=thread_id)
    active = ACTIVE_RUNS.get(thread_id)
    if active is None:
        texts = [await stored_snapshot_text(thread, message["model"])]
    else:
        texts = await _live_snapshot_texts(thread, active, message["model"])
    reply = {"type": "thread.replayed", "thread": message["thread"], "texts": texts}
    await get_channel_layer().send(message["reply_to"], reply)
