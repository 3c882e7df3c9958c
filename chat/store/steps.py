"""What a run writes as it goes: its answers, their tool calls and results, its heartbeat, a pause, its end; and
runs a dead process left running. Synchronous: async code calls them through database_sync_to_async."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from django.db.models import (
    Case,
    Max,
    Q,
    TextField,
    Value,
    When,
)
from django.utils import timezone

from ..live.events import INTERRUPTED_RESULT
from ..models import Message, Run, Thread, ToolCall, Usage

STOPPED_SERVER_ERROR = "The server stopped during this run; the partial answer is kept."
LOST_REDIS_ERROR = "The server lost its connection to Redis during this run; the partial answer is kept."


def next_order(thread: Thread) -> int:
    return (thread.messages.aggregate(m=Max("order"))["m"] or 0) + 1


def create_assistant_message(
    *, thread_id: uuid.UUID, run_id: int, order: int | None = None, parent_id: int | None = None
) -> int:
    """`order`: the message's place when the caller knows it (the run, the thread's only writer while it
    streams: see RunRecorder.next_order), else read from the thread. `parent_id`: the user message it is the first
    answer to, which a regenerate makes versions of (chat/store/versions.py); None for a later step's answer."""
    if order is None:
        order = next_order(Thread.objects.get(pk=thread_id))
    message = Message.objects.create(
        thread_id=thread_id,
        run_id=run_id,
        order=order,
        role=Message.Role.ASSISTANT,
        status=Message.Status.STREAMING,
        parent_id=parent_id,
    )
    return message.pk


def discard_message(*, message_id: int) -> None:
    """A message reserved for a run's first answer that the run never started (it failed before)."""
    Message.objects.filter(pk=message_id, content="").delete()


def save_partial_content(*, message_id: int, content: str) -> None:
    Message.objects.filter(pk=message_id).update(content=content, updated_at=timezone.now())


def save_streaming_texts(*, texts: dict[int, str]) -> None:
    """The text so far of answers still streaming, by message id, in one statement (chat/flush.py). An answer that
    ended meanwhile is left as its end wrote it."""
    Message.objects.filter(pk__in=texts, status=Message.Status.STREAMING).update(
        content=Case(*(When(pk=pk, then=Value(text)) for pk, text in texts.items()), output_field=TextField()),
        updated_at=timezone.now(),
    )


def complete_assistant_message(
    *,
    message_id: int,
    content: str,
    status: str,
    finish_reason: str = "",
    usage: dict | None = None,
    reasoning: str = "",
    structured: object = None,
) -> None:
    Message.objects.filter(pk=message_id).update(
        content=content,
        reasoning=reasoning,
        structured=structured,
        status=status,
        finish_reason=finish_reason,
        usage=usage or None,
        updated_at=timezone.now(),
    )


# What the run changes on a call it holds (chat/recorder.py), written when the call was stored before.
CALL_FIELDS = ("args", "status", "approval", "started_at", "finished_at", "duration_ms", "result", "error", "images")


#: A finished call's answer: the call, the text the model reads as its result, and what the model never sees (an
#: artifact, or None).
Answer = tuple[ToolCall, str, Any]


def record_tool_calls(
    *,
    message_id: int | None,
    thread_id: uuid.UUID,
    run_id: int,
    new: list[ToolCall],
    changed: list[ToolCall],
    answers: list[Answer],
    after: int | None = None,
) -> None:
    """A step's tool calls as the run holds them, in one transaction: the calls not written before (of message
    `message_id`) in one INSERT, those written before (a snapshot, a resumed step) in one UPDATE, then the tool
    messages answering the finished ones (add_tool_results, `after`)."""
    with transaction.atomic():
        if new:
            for call in new:
                call.message_id = message_id
            ToolCall.objects.bulk_create(new)
        if changed:
            ToolCall.objects.bulk_update(changed, CALL_FIELDS)
        add_tool_results(thread_id=thread_id, run_id=run_id, answers=answers, after=after)


def add_tool_results(
    *, thread_id: uuid.UUID, run_id: int | None, answers: list[Answer], after: int | None = None
) -> None:
    """The tool messages answering finished calls, the only writer of them: one INSERT, right after the thread's
    last message, in the order given. `after`: that message's order when the caller knows it (a run, the thread's
    only writer of messages while it goes on: RunRecorder.last_order), else it is read."""
    if not answers:
        return
    if after is None:
        after = next_order(Thread(pk=thread_id)) - 1
    Message.objects.bulk_create(
        [
            Message(
                thread_id=thread_id,
                run_id=run_id,
                order=after + place,
                role=Message.Role.TOOL,
                content=content,
                status=Message.Status.COMPLETE if call.status in ToolCall.ANSWERED_STATUSES else Message.Status.ERROR,
                tool_call_id=call.call_id,
                name=call.name,
                artifact=artifact,
            )
            for place, (call, content, artifact) in enumerate(answers, 1)
        ]
    )


def finish_run(
    *,
    run_id: int,
    status: str,
    reason: str = "",
    error: str = "",
    steps: int,
    usage: list[Usage] = (),
    totals: dict | None = None,
) -> None:
    """End the run as `status`. Its events are numbered by the thread's log (chat/live/), not here. `usage`: the rows
    of its model calls not written yet, one INSERT; `totals`: the run's usage so far (chat/usage.py), or None to keep
    what the row holds."""
    # One transaction: a process that dies half-way leaves the run running, which recovery finishes again.
    with transaction.atomic():
        if usage:
            Usage.objects.bulk_create(usage)
        if status != Run.Status.COMPLETED:
            # A run that completed ended every step it began; any other may have left a message streaming and calls
            # open: they are closed, so the history stays one a model accepts.
            ToolCall.objects.filter(message__run_id=run_id, status__in=ToolCall.OPEN_STATUSES).update(
                status=ToolCall.Status.CANCELLED, error=INTERRUPTED_RESULT, finished_at=timezone.now()
            )
            Message.objects.filter(run_id=run_id, status=Message.Status.STREAMING).update(
                status=Message.Status.CANCELLED if status == Run.Status.CANCELLED else Message.Status.ERROR
            )
        # The thread is not touched: the list orders chats by when the person last sent in them (docs/ui.md), which
        # the turn's start recorded; a run's end moving its chat would take the statement the usage rows need.
        changes = {"usage": totals} if totals is not None else {}
        Run.objects.filter(pk=run_id).update(
            status=status, reason=reason, error=error, steps=steps, finished_at=timezone.now(), **changes
        )


# --- a pause for decisions ------------------------------------------------------------------


def pause_run(*, run_id: int, steps: int, usage: list[Usage] = (), totals: dict | None = None) -> None:
    """The run waits for decisions: as finish_run, its usage rows and totals are written with it."""
    with transaction.atomic():
        if usage:
            Usage.objects.bulk_create(usage)
        changes = {"usage": totals} if totals is not None else {}
        Run.objects.filter(pk=run_id).update(status=Run.Status.WAITING, steps=steps, heartbeat_at=None, **changes)


# --- runs whose process died ----------------------------------------------------------------


def heartbeat(*, run_ids: list[int]) -> None:
    """The runs of a process that is alive (chat/runs/heartbeat.py), those still running: one statement."""
    Run.objects.filter(pk__in=run_ids, status=Run.Status.RUNNING).update(heartbeat_at=timezone.now())


def interrupt_stale_runs(*, stale_before, keep: set[int], thread_id: uuid.UUID | None = None) -> list[uuid.UUID]:
    """Runs left running by a process that is gone become interrupted (partial text kept); waiting runs
    stay waiting. `stale_before` None: every running run not in `keep` (one process owns them all)."""
    running = Run.objects.filter(status=Run.Status.RUNNING).exclude(pk__in=keep)
    if thread_id is not None:
        running = running.filter(thread_id=thread_id)
    if stale_before is not None:
        running = running.filter(
            Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True, started_at__lt=stale_before)
        )
    threads = []
    for run in running:
        finish_run(
            run_id=run.pk,
            status=Run.Status.INTERRUPTED,
            error=STOPPED_SERVER_ERROR,
            steps=run.steps,
        )
        threads.append(run.thread_id)
    return threads


def add_run_note(*, run_id: int, text: str) -> None:
    """The note added to the run's. A run's first note (a turn trimmed to the model's window says so, every turn of a
    chat longer than the window) is one UPDATE; a later one reads the notes there are first."""
    if Run.objects.filter(pk=run_id, notes=[]).update(notes=[text]):
        return
    run = Run.objects.get(pk=run_id)
    run.notes = [*run.notes, text]
    run.save(update_fields=["notes"])
