"""What a subscriber is sent first, whichever process runs the thread's run: the log's tail after its last event,
or a snapshot from the database; while a run streams, its current message is rebuilt from the log's tail (the
process that runs it is never asked, and may be this one or any other)."""

from __future__ import annotations

import json

from channels.db import database_sync_to_async

from .. import live, store
from ..live.views import SnapshotView
from ..models import Message, Run, Thread
from ..store.pages import PAGE_MESSAGES
from .recovery import ensure_recovered, live_run
from .registry import runs_here

db = database_sync_to_async


async def subscribe_texts(thread: Thread, after_seq: int | None, *, paged: bool = False) -> list[str]:
    """The events after `after_seq` when the thread's log still has them all, else a snapshot (and the events
    after it). The caller follows the thread's group first: events published meanwhile reach it too, and it drops
    those it already sent. What a browser may see of the thread's model is read only for a snapshot: a tab that
    resumes from the tail has it. `paged`: the snapshot carries only the newest PAGE_MESSAGES or so messages and the
    cursor of the ones before (a subscribe's `paged`, chat/store/pages.py); the tail is the same either way."""
    await ensure_recovered()
    if after_seq is not None:
        texts = await live.read_after(thread.pk, after_seq)
        if texts is not None:
            return texts
    return await snapshot_and_tail(thread, page=PAGE_MESSAGES if paged else None)


async def snapshot_and_tail(thread: Thread, *, page: int | None = None) -> list[str]:
    """The thread as the database holds it, as of the log's number read first: every event up to it was written down
    before it was published, and an event after it that the snapshot holds already is one a tab applies again
    harmlessly (the events that do not repeat harmlessly, a stream's deltas, come only from a streaming run).

    The database lacks only parts of a streaming run's latest message (its text is written when it ends, and every
    AGENTWEB_FLUSH_INTERVAL for crash safety; its tool calls when the step's tools have finished): while a run
    streams, that message is sent empty and rebuilt by its events, read from the log's tail (see rebuild). The tail
    is read before the database is read again: whatever the run writes between the two reads, the events that say
    so are in the tail or still to come. A tail that no longer reaches back to that message's start (a step that
    streams longer than the tail keeps) gives the stored snapshot: its text lags until message.completed, which
    carries the whole text, replaces it (docs/protocol.md, "Reconnecting")."""
    seq = await live.last_seq(thread.pk)
    snapshot = await db(_snapshot)(thread, seq, page)
    streams = await _streams(thread, snapshot)
    if streams is None:  # it ended meanwhile, or was interrupted just now: the snapshot read before is out of date
        snapshot = await db(_snapshot)(thread, await live.last_seq(thread.pk), page)
    if not streams:
        return [json.dumps(snapshot, ensure_ascii=False)]
    tail = await live.read_from_last(thread.pk, "message.started")
    if tail is None:
        return [json.dumps(snapshot, ensure_ascii=False)]
    return rebuild(await db(_snapshot)(thread, 0, page), tail)


async def _streams(thread: Thread, snapshot: SnapshotView) -> bool | None:
    """Whether the snapshot's run is running; None when it was, and is not now (it ended meanwhile, or its process had
    died). A run no task of this process runs is asked after in the database (live_run): one whose process died (no
    heartbeat) becomes interrupted there, with the text its tabs were shown, and they are told; the caller then reads
    the snapshot again, so that this tab is shown the run as interrupted, with that text (the events that told the
    others are behind its seq)."""
    run = snapshot["run"]
    if run is None or run["status"] != Run.Status.RUNNING:
        return False
    if thread.pk in runs_here().active:
        return True
    return True if await live_run(thread.pk) is not None else None


def _snapshot(thread: Thread, seq: int, page: int | None = None) -> SnapshotView:
    """The thread's snapshot as of `seq`, with what a browser may see of its model: one trip to the database."""
    return store.build_snapshot(thread=thread, seq=seq, model=store.thread_model_info(thread), page=page)


def rebuild(snapshot: SnapshotView, tail: list[str]) -> list[str]:
    """A snapshot read from the database after `tail` (the log's events from the latest `message.started` on) was
    read, made into the state just before that event, followed by the tail: what a tab that watched from the start
    shows, once it has applied them.

    The message the tail starts with is sent empty, without tool calls: its events rebuild it (a tab ignores
    `message.started` and `tool_call.started` of what it has, and appends deltas). Assistant messages after it
    were announced after the tail was read: their events come live. Everything else the database holds is as of
    the tail's end or later, and the tail's other events set what they say (a status, a decision, a model)
    rather than add to it, so applying them again changes nothing; the run's notes that the tail tells are
    left out of the snapshot, which would show them twice."""
    events = [json.loads(text) for text in tail]
    started = events[0]["message"]["id"]
    snapshot["seq"] = events[0]["seq"] - 1
    messages = []
    for message in snapshot["messages"]:
        if message["role"] == Message.Role.ASSISTANT and message["id"] > started:
            continue
        if message["id"] == started:
            message.update(content="", status=Message.Status.STREAMING, reasoning=None, finish_reason=None)
            message.update(usage=None, tool_calls=[])
        messages.append(message)
    snapshot["messages"] = messages
    run = snapshot["run"]
    if run is not None:
        told = [e["text"] for e in events if e["type"] == "run.note" and e["run"] == run["id"]]
        if told and run["notes"][-len(told) :] == told:
            run["notes"] = run["notes"][: -len(told)]
    return [json.dumps(snapshot, ensure_ascii=False), *tail]
