"""The agent's sink for one run: writes what happens down and tells the thread's group.

The streaming message's text is written when it ends, never per token, so a turn's statements do not grow
with the answer's length. Before that it is written when the run stops (abort) and, for crash safety only,
every `flush_interval` (AGENTWEB_FLUSH_INTERVAL, 2 s) while it streams longer than that, by the process's one
flush for all its streaming answers (chat/flush.py): a server killed while a message streams loses at most a
couple of seconds of what its tabs were shown, and an answer that ends sooner gains no statement. A page that
asks for the thread's state meanwhile gets what the database holds with the streaming message rebuilt from the
thread's log (chat/runs/subscribe.py): nothing is written for it, and the stream does not wait. Deltas go out
coalesced (chat/live/coalesce.py).
"""

from __future__ import annotations

import asyncio
import copy
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async
from django.utils import timezone

from providers.types import ToolCallRequest
from tools.artifacts import shown_images
from tools.executor import ToolResult

from . import live, notify, store
from .agent import StepResult
from .flush import forget_text, keep_text
from .live import events
from .live.coalesce import DeltaCoalescer, Take
from .live.views import ToolCallExtras
from .models import ToolCall
from .text import storable, storable_value
from .usage import Meter

db = database_sync_to_async


@dataclass
class RunRecorder:
    """The agent's sink: writes the run down and tells the thread's group."""

    thread_id: uuid.UUID
    run_id: int
    flush_interval: float
    window: float
    steps: int = 0
    message_id: int | None = None
    message_open: bool = False
    emitted: list[str] = field(default_factory=list)
    # The step's tool calls by index, as the run holds them: their rows are written when the step's tools have all
    # finished (one INSERT for the step), earlier when a page asks for the thread's state or a result carries an
    # artifact (see _write_calls).
    calls: dict[int, ToolCall] = field(default_factory=dict)
    # The order of the thread's last message, when the run knows it (chat/runs/execute.py sets it from the history it
    # loads): while the run streams it is the thread's only writer of messages, so it numbers its own without
    # asking the database. None: each new message reads it.
    last_order: int | None = None
    # The first answer's message, inserted before the model request (chat/runs/execute.py prepare_run): its first token
    # goes out without waiting for an INSERT.
    reserved_message_id: int | None = None
    # The run's model calls: their usage and cost (chat/usage.py), written with the run's pause or end.
    meter: Meter = field(default_factory=Meter)
    # The run's end (or pause) is written: what fails after it fails only to tell the tabs (chat/runs/execute.py).
    ended: bool = False
    # The thread ended with a failed answer when the run began (a retry): if the run's first answer fails too before
    # anything of it was shown, it is not kept. One "The answer ended with an error." per chain of failures.
    follows_a_failure: bool = False
    # The thread's owner, when the run knows it: told to the notifier with each event (chat/notify.py).
    owner_id: int | None = None

    def __post_init__(self):
        self.coalescer = DeltaCoalescer(self._send_delta, window=self.window)
        self._log = live.delivery().log()  # this event loop's log, kept for the run's every frame
        # How many of `emitted` the log has sent (what the flush may write: chat/flush.py), and the streaming
        # message's reasoning.
        self._shown = 0
        self.thought: list[str] = []
        self._last_save = time.monotonic()
        self._save_task: asyncio.Task | None = None
        # When the streaming message's first piece went out (or the flush last wrote it), and how many of `emitted` the
        # flush wrote (chat/flush.py).
        self._kept_at = 0.0
        self._kept = 0
        # The streaming message's INSERT, started when the step starts and awaited when its first content (or
        # its end) arrives: the model request does not wait for it.
        self._insert: asyncio.Future | None = None
        self._announced = True
        self._write_lock = asyncio.Lock()
        self._awaiting: list[tuple[str, dict[str, bool]]] = []
        # Which calls have a row, which rows lag what is held here, and the answers of finished calls, until they
        # are written.
        self._stored: set[uuid.UUID] = set()
        self._dirty: set[uuid.UUID] = set()
        self._answers: list[store.Answer] = []
        # What a running call's tool told beyond its status (chat/runs/interaction.py): its last progress and its
        # open request for input, by call id, as of the last event the run published; the live view carries it.
        self.call_extras: dict[str, ToolCallExtras] = {}

    # --- AgentSink -------------------------------------------------------------------

    async def assistant_started(self) -> None:
        self.steps += 1
        self.message_id, self._announced = None, False
        if self.reserved_message_id is not None:
            self.message_id, self.reserved_message_id, self._insert = self.reserved_message_id, None, None
        else:
            self._insert = asyncio.ensure_future(
                db(store.create_assistant_message)(
                    thread_id=self.thread_id, run_id=self.run_id, order=self._next_order()
                )
            )
        self.emitted, self.calls, self.message_open, self._awaiting = [], {}, True, []
        self._stored, self._dirty, self._answers = set(), set(), []
        self._shown = self._kept = 0
        self.thought = []
        self._last_save = time.monotonic()

    async def _message_id(self) -> int:
        if self.message_id is None:
            # Shielded: a run cancelled while it waits still gets the id when it aborts.
            self.message_id = await asyncio.shield(self._insert)
        return self.message_id

    async def _announce(self) -> None:
        """message.started, before anything else of the message."""
        if not self._announced:
            self._announced = True
            message_id = await self._message_id()
            await self.emit(events.message_started(message_id))
            self._kept_at = time.monotonic()
            keep_text(self.run_id, self)

    async def emit(self, event: events.Event) -> None:
        """One event of the run, to the thread's log (delivery/log.py)."""
        await self._log.publish(self.thread_id, [event])

    async def text_delta(self, text: str) -> None:
        text = storable(text)  # the model's text is stored and sent as it is cleaned here, never raw
        if not self._announced:
            await self._announce()
            await self.coalescer.push(("message", self.message_id), text)
            await let_sockets_send()
            return
        await self.coalescer.push(("message", self.message_id), text)

    async def reasoning_delta(self, text: str) -> None:
        text = storable(text)
        if not self._announced:
            await self._announce()
            await self.coalescer.push(("reasoning", self.message_id), text)
            await let_sockets_send()
            return
        await self.coalescer.push(("reasoning", self.message_id), text)

    async def tool_call_started(self, index: int, call_id: str, name: str) -> None:
        await self._announce()
        await self.coalescer.flush()
        call = ToolCall(
            id=uuid.uuid4(),
            index=index,
            call_id=storable(call_id),
            name=storable(name),
            status=ToolCall.Status.STREAMING,
        )
        self.calls[index] = call
        self._dirty.add(call.id)
        await self.emit(events.tool_call_started(str(call.id), call_id, name, self.message_id))

    async def tool_call_args_delta(self, index: int, text: str) -> None:
        await self.coalescer.push(("tool_call", str(self.calls[index].id)), storable(text))

    async def assistant_completed(self, step: StepResult) -> None:
        await self._announce()
        await self.coalescer.flush()
        for index, call in zip(step.indexes, step.message.tool_calls, strict=True):
            if index not in self.calls:  # a provider that ended a call it never started
                await self.tool_call_started(index, call.id, call.name)
            state = self.calls[index]
            state.args, state.status = storable_value(shown_args(call)), ToolCall.Status.REQUESTED
            self._dirty.add(state.id)
        content = storable(step.message.content)
        usage = self.meter.record(step.usage) if step.usage else None
        # A structured answer that matched its schema: its value, stored and sent beside the text.
        structured = storable_value(step.structured) if step.structured_ok else None
        await self._wait_for_save()
        await db(store.complete_assistant_message)(
            message_id=self.message_id,
            content=content,
            status="complete",
            finish_reason=step.finish_reason,
            usage=usage,
            reasoning=storable(step.reasoning),
            structured=structured,
        )
        self.emitted, self.message_open = [content], False
        forget_text(self.run_id)
        await self.emit(events.answer_completed(self.message_id, content, step.finish_reason, usage, structured))
        for index in step.indexes:
            state = self.calls[index]
            await self.emit(events.tool_call_requested(str(state.id), state.args))

    def assistant_interrupted(self, usage: dict[str, Any]) -> None:
        """The step's model call ended early (Stop, a failure) after the server had answered some of it: its usage
        (estimated where not counted) goes into the run's, written as the run ends. Synchronous: it is called while
        the step's exception (a cancellation too) goes by."""
        self.meter.record(usage)

    async def tool_call_running(self, index: int) -> None:
        call = self.calls[index]
        call.status, call.started_at = ToolCall.Status.RUNNING, timezone.now()
        self._dirty.add(call.id)
        await self.emit(events.tool_call_running(str(call.id)))

    async def tool_call_awaiting(self, index: int, allow: dict[str, bool]) -> None:
        call = self.calls[index]
        call.status, call.approval = ToolCall.Status.AWAITING_APPROVAL, allow
        self._dirty.add(call.id)
        # Told once the call is written (step_finished): a decision finds it waiting in the database.
        self._awaiting.append((str(call.id), allow))

    async def note(self, text: str) -> None:
        text = storable(text)
        await db(store.add_run_note)(run_id=self.run_id, text=text)
        await self.emit(events.run_note(self.run_id, text))

    async def tool_call_completed(self, index: int, result: ToolResult) -> None:
        call = self.calls[index]
        content, artifact = storable(result.content), storable_value(result.artifact)
        stored = content if result.stored_content is None else storable(result.stored_content)
        call.finish(result.status, stored)
        call.duration_ms = result.duration_ms
        call.images = len(shown_images(artifact)) if artifact is not None else 0
        self._dirty.add(call.id)
        self._answers.append((call, content, artifact))
        if artifact is not None:
            await self._write_calls()  # the card offers its viewer at once, which reads the stored answer
        elif time.monotonic() - self._last_save >= self.flush_interval:
            self._save_in_background()
        await self.emit(
            events.tool_call_completed(
                str(call.id),
                result.status,
                content,
                has_artifact=artifact is not None,
                duration_ms=result.duration_ms,
                images=call.images,
            )
        )

    async def step_finished(self) -> None:
        """The step's calls have all finished or wait for a person: write them and their results."""
        await self._write_calls()
        awaiting, self._awaiting = self._awaiting, []
        for tool_call, allow in awaiting:
            await self.emit(events.tool_call_awaiting_approval(tool_call, allow))
        if awaiting:  # the person is told off the tabs too (notifications/): names only, handed over at once
            names = {str(c.id): c.name for c in self.calls.values()}
            told = [(call, names.get(call, "")) for call, _ in awaiting]
            notify.calls_wait(self.thread_id, self.run_id, told, owner_id=self.owner_id)

    async def _write_calls(self) -> None:
        """The calls' rows and answers that lag what the run holds, in one trip (store.record_tool_calls)."""
        async with self._write_lock:
            # Copies: the database thread writes them while the run goes on changing the calls it holds.
            rows = [copy.copy(call) for call in self.calls.values() if call.id in self._dirty]
            answers, self._answers = self._answers, []
            if not rows and not answers:
                return
            new = [call for call in rows if call.id not in self._stored]
            changed = [call for call in rows if call.id in self._stored]
            message_id = await self._message_id() if new else None
            self._stored.update(call.id for call in rows)
            self._dirty.clear()
            after = self.last_order  # the answers go right after the thread's last message
            if after is not None:
                self.last_order += len(answers)
            await db(store.record_tool_calls)(
                message_id=message_id,
                thread_id=self.thread_id,
                run_id=self.run_id,
                new=new,
                changed=changed,
                answers=answers,
                after=after,
            )

    def resume_with(self, calls: list[ToolCall]) -> None:
        """The calls of a paused step that a person approved, as stored: they run now."""
        for call in calls:
            self.calls[call.index] = call
            self._stored.add(call.id)

    # --- the end of a run that did not complete ---------------------------------------

    async def abort(self, status: str) -> None:
        """Keep the partial text, mark it `status` (cancelled | error), and close every open tool call."""
        forget_text(self.run_id)
        await self.coalescer.flush()
        self.coalescer.close()
        await self._wait_for_save()
        if self.message_open:
            self.message_open = False
            content = "".join(self.emitted)
            message_id = await self._message_id()
            if status == "error" and self.follows_a_failure and self.steps == 1 and not self._announced:
                await db(store.discard_message)(message_id=message_id)  # never announced: no tab shows it
                return
            if not self._announced:
                self._announced = True
                await self.emit(events.message_started(message_id))
            await db(store.save_partial_content)(message_id=message_id, content=content)
            await self.emit(events.message_completed(message_id, content, status))
        # The results in hand are kept; the calls still open are closed by finish_run.
        await self._write_calls()
        for call in self.calls.values():
            if call.is_open():
                await self.emit(events.tool_call_cancelled(str(call.id)))

    async def keep_shown(self) -> list[events.Event]:
        """Redis went away mid-run (chat/runs/execute.py): the streaming message keeps the text its tabs were shown
        (what was published) and the calls are written as they are, without publishing anything. Returns the events
        that tell the tabs, to publish once Redis answers again."""
        forget_text(self.run_id)
        self.coalescer.close()
        told: list[events.Event] = []
        if self.message_open:
            self.message_open = False
            content = "".join(self.emitted[: self._shown])
            message_id = await self._message_id()
            await db(store.save_partial_content)(message_id=message_id, content=content)
            told.append(events.message_completed(message_id, content, "error"))
        await self._write_calls()
        told += [events.tool_call_cancelled(str(call.id)) for call in self.calls.values() if call.is_open()]
        return told

    # --- persistence of the streaming message -----------------------------------------

    def _next_order(self) -> int | None:
        if self.last_order is None:
            return None
        self.last_order += 1
        return self.last_order

    def text_to_keep(self, now: float) -> tuple[int, str] | None:
        """(message id, the text its tabs were shown) when `flush_interval` has passed since the streaming message began
        (or was last written) and it has been shown more since (chat/flush.py); else None."""
        if not self.message_open or self.message_id is None or self._shown == self._kept:
            return None
        if now - self._kept_at < self.flush_interval:
            return None
        self._kept, self._kept_at = self._shown, now
        return self.message_id, "".join(self.emitted[: self._shown])

    def _send_delta(self, key: tuple[str, Any], take: Take) -> asyncio.Future:
        """Queue a stream's frame with the log (chat/live/coalesce.py): its text is taken when it goes out."""
        kind, ident = key
        shown: int | None = None

        def make() -> list[events.Event]:
            nonlocal shown
            text = take()
            if not text:
                return []
            if kind == "message":
                self.emitted.append(text)
                shown = len(self.emitted)
                return [events.message_delta(ident, text)]
            if kind == "reasoning":
                self.thought.append(text)
                return [events.message_reasoning_delta(ident, text)]
            return [events.tool_call_args_delta(ident, text)]

        def published(sent: asyncio.Future) -> None:
            if shown is not None and not sent.cancelled() and sent.exception() is None and sent.result() is not None:
                self._shown = shown

        sent = self._log.publish_later(self.thread_id, make)
        sent.add_done_callback(published)
        return sent

    async def save_now(self) -> None:
        """Write the text sent so far and the calls as they are (crash safety: see the module's docstring)."""
        if self.message_id is not None or self._insert is not None:
            await db(store.save_partial_content)(
                message_id=await self._message_id(),
                content="".join(self.emitted),
            )
        await self._write_calls()

    def _save_in_background(self) -> None:
        if self._save_task is None or self._save_task.done():
            self._last_save = time.monotonic()
            self._save_task = asyncio.ensure_future(self.save_now())

    async def _wait_for_save(self) -> None:
        if self._save_task is not None and not self._save_task.done():
            await self._save_task


#: Event-loop turns a socket's consumer needs to take one queued event and hand it to Daphne (the channel
#: layer's queue wakes its receive task, the consumer's loop (delivery/dispatch.py) wakes on that, then sends),
#: times the two events a message opens with (message.started, its first delta), with some to spare.
FIRST_PIECE_TURNS = 10


def shown_args(call: ToolCallRequest) -> dict | str:
    """A call's arguments as its card shows them and its row keeps them: the model's own text (a JSON string)
    for a call whose arguments could not be read, so the card shows what was written, not {}."""
    return call.raw if call.raw is not None else call.args


async def let_sockets_send() -> None:
    """Give the loop to the thread's sockets right after a message's first piece is emitted.

    A model's answer often arrives faster than it is read: httpx then hands over chunk after chunk that are
    already buffered without ever suspending, and the run's task would process the whole burst (and its
    final flush) before any socket's consumer ran, holding the first token back by ~4 ms
    (bench first-token). Once per message, so the cost is a few loop turns per step.
    """
    for _ in range(FIRST_PIECE_TURNS):
        await asyncio.sleep(0)
