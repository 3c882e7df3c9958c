"""Runs as tasks that no websocket owns: start, pause for approval, resume, cancel, retry, continue.

The database is the checkpoint: a run that waits for a person's decision is not a task at all, only
rows; the decision that completes its step starts a new task that resumes it, in whichever process
receives that decision, before or after a restart.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from modelconfig.services import UnknownModel, check_choice, config_for
from providers.budget import DEFAULT_RESERVE, ContextBudget
from providers.config import ModelConfig, build_provider
from providers.types import ModelError, ToolCallRequest
from tools.context import ToolContext, ToolUser
from tools.executor import validation_errors
from tools.services import ToolSet, toolset_for_stamp, toolset_for_user
from tools.store import DatabaseStore

from . import live, run_owners, services
from .access import current_user
from .agent import AgentGaveUp, DecidedCall, RegistryToolbox, run_agent
from .broadcast import tell_user
from .live import events, group_name
from .models import Run, Thread, ToolCall
from .recorder import RunRecorder

__all__ = ["UnknownModel", "group_name"]

log = logging.getLogger("agentweb.runs")
User = get_user_model()
db = database_sync_to_async

# The channel `manage.py runworker agentweb-runs` reads (chat/worker.py) when AGENTWEB_RUN_WORKERS is on.
RUNS_CHANNEL = "agentweb-runs"


def context_budget(config: ModelConfig) -> ContextBudget | None:
    if not config.context_window:
        return None
    return ContextBudget(
        config.context_window,
        reserve=config.max_tokens or DEFAULT_RESERVE,
        protocol=(config.tool_protocol or "native").lower(),
    )


def single_process() -> bool:
    """Without Redis every run lives in this process, so a run this process does not know is an orphan."""
    return not settings.REDIS_URL


def stale_before():
    """A running run whose heartbeat is older than this belongs to a process that died."""
    return timezone.now() - timedelta(seconds=settings.AGENTWEB_RUN_STALE_SECONDS)


# --- which tools, and which of their calls wait for a person ----------------------------


def load_toolset(user) -> ToolSet:
    """The tools `user` may use now, with the admin's settings applied (tools/services.py)."""
    return toolset_for_user(user=user)


def tool_context_factory(user, thread_id: uuid.UUID, groups: frozenset[str] | None = None):
    """What each tool call of this run may be injected with: the user, the thread, the call id, the store.
    `groups`: the user's group names, when the caller read them already."""
    if groups is None:
        groups = frozenset(user.groups.values_list("name", flat=True))
    tool_user = ToolUser(id=user.pk, username=user.get_username(), groups=groups)
    store = DatabaseStore(user.pk)

    async def search(query: str, limit: int) -> list[dict[str, Any]]:
        return await db(services.search_messages)(user=user, query=query, limit=limit)

    def context(call: ToolCallRequest) -> ToolContext:
        return ToolContext(
            user=tool_user, thread_id=str(thread_id), tool_call_id=call.id, store=store, search_messages=search
        )

    return context


class ThreadApprovalPolicy:
    """A call waits when the admin's rules for its arguments say so, else when its tool requires approval;
    never when the person approved that tool for the rest of the thread."""

    def __init__(self, toolset: ToolSet, granted: set[str]):
        self.toolset = toolset
        self.granted = granted

    def requirement(self, call: ToolCallRequest) -> dict[str, bool] | None:
        if call.name in self.granted:
            return None
        return self.toolset.requirement(call.name, call.args)


# --- live runs of this process --------------------------------------------------------------


@dataclass
class ActiveRun:
    run_id: int
    task: asyncio.Task
    recorder: RunRecorder
    # With several processes: what reads the run's group, where cancels and requests for its state arrive.
    inbox: asyncio.Task | None = None


ACTIVE_RUNS: dict[uuid.UUID, ActiveRun] = {}


class SignedOut(Exception):
    """The socket's session ended (see chat.access.current_user): nothing was written."""


async def begin_turn(
    *,
    user,
    session_key: str | None,
    thread_id: str | None,
    content: str,
    client_msg_id: uuid.UUID,
    model: str | None = None,
) -> tuple[services.TurnStart, RunSetup | None]:
    """Store the user's message and open a run (see services.start_turn), once the session of `session_key` is
    found to be still `user`'s (SignedOut, and nothing written, when it is not). `model`, when given, becomes the
    thread's model: UnknownModel, and nothing written, when it is not one that can be picked.

    With the run's setup (prepare_run) when this process runs it: read in the same trip to the database thread,
    which its model request waits for (one trip, not two: bench first-token). Pass it on to launch_run."""
    await ensure_recovered()
    turn, setup, info = await db(open_turn)(
        user=user,
        session_key=session_key,
        thread_id=thread_id,
        content=content,
        client_msg_id=client_msg_id,
        model=model,
    )
    if info is not None and turn.run is not None and not turn.created_thread:
        await announce_model(turn.thread.pk, info)
    return turn, setup


def open_turn(
    *, user, session_key: str | None, thread_id: str | None, content: str, client_msg_id: uuid.UUID, model: str | None
) -> tuple[services.TurnStart, RunSetup | None, dict[str, Any] | None]:
    """begin_turn's one trip to the database thread: the session's check, the model's, the turn, and the run's
    setup when this process runs it (a run handed to a worker, or taken by one process among others through
    chat/run_owners.py, prepares itself)."""
    current = current_user(session_key)
    if current is None or current.pk != user.pk:
        raise SignedOut
    info = check_choice(model) if model else None
    # One transaction: a turn whose run could not be prepared is not left open (with an active run no task runs).
    with transaction.atomic():
        turn = services.start_turn(
            user=current,
            thread_id=thread_id,
            content=content,
            client_msg_id=client_msg_id,
            step_limit=settings.AGENTWEB_MAX_STEPS,
            model_choice=model or None,
        )
        here = single_process() and not settings.AGENTWEB_RUN_WORKERS
        setup = prepare_run(turn.thread, run=turn.run) if here and turn.run is not None else None
    return turn, setup, info


async def set_model(*, user, thread_id: str, model: str) -> dict[str, Any]:
    """The person picked another model for their thread: store it and tell the thread's group."""
    info = await db(check_choice)(model)
    thread = await db(services.set_thread_model)(user=user, thread_id=thread_id, model_choice=model)
    await announce_model(thread.pk, info)
    return info


async def announce_model(thread_id: uuid.UUID, info: dict[str, Any]) -> None:
    await live.publish(thread_id, [events.thread_model_changed(info)])


async def begin_followup(*, user, thread_id: str, kind: str, steps: int | None = None) -> services.TurnStart:
    """`retry` a run that failed, was interrupted or cancelled; `continue` one that hit its step limit."""
    await ensure_recovered()
    return await db(services.start_followup_run)(
        user=user,
        thread_id=thread_id,
        kind=kind,
        step_limit=steps or settings.AGENTWEB_MAX_STEPS,
    )


async def launch_run(
    turn: services.TurnStart, *, resume: list[ToolCall] | None = None, setup: RunSetup | None = None
) -> ActiveRun | None:
    """Start the run here, or with AGENTWEB_RUN_WORKERS hand it to whichever worker reads the runs channel. A run
    that waits for decisions (a retry that asks again) is not a task: its events say so, the decisions resume it.
    `setup`: what the run reads before its model request, read already (begin_turn)."""
    if turn.awaiting:
        await announce_waiting(turn)
        return None
    if settings.AGENTWEB_RUN_WORKERS:
        await get_channel_layer().send(
            RUNS_CHANNEL,
            {
                "type": "run.launch",
                "thread": str(turn.thread.pk),
                "run": turn.run.pk,
                "created_thread": turn.created_thread,
                "resume": resume is not None,
                "message": turn.user_message_id,
            },
        )
        _watch_handover(turn.thread.pk, turn.run.pk)
        return None
    return await start_here(turn, resume=resume, setup=setup)


async def announce_waiting(turn: services.TurnStart) -> None:
    run_id = turn.run.pk
    told = [events.run_started(run_id, Run.Status.WAITING)]
    told += [events.tool_call_awaiting_approval(call, allow) for call, allow in turn.awaiting]
    told.append(events.run_waiting(run_id, [call for call, _ in turn.awaiting]))
    await live.publish(turn.thread.pk, told)


NO_WORKER = (
    "No run worker took this run within {seconds:g} s. This server hands runs to `manage.py runworker "
    "agentweb-runs` processes (AGENTWEB_RUN_WORKERS); is one running? Retry when it is."
)
_handover_watches: set[asyncio.Task] = set()


def _watch_handover(thread_id: uuid.UUID, run_id: int) -> None:
    """Without a worker running, a handed-over run would say "running" until the stale limit: fail it with
    a message that says why, after AGENTWEB_RUN_HANDOVER_SECONDS, unless a worker has taken it by then."""
    task = asyncio.ensure_future(_fail_if_untaken(thread_id, run_id, settings.AGENTWEB_RUN_HANDOVER_SECONDS))
    _handover_watches.add(task)  # the loop keeps only weak references to tasks
    task.add_done_callback(_handover_watches.discard)


async def _fail_if_untaken(thread_id: uuid.UUID, run_id: int, seconds: float) -> None:
    await asyncio.sleep(seconds)
    error = NO_WORKER.format(seconds=seconds)
    try:
        if await db(run_owners.fail_untaken)(run_id=run_id, error=error):
            log.warning("run %s: no worker took it within %g s", run_id, seconds)
            await live.publish(thread_id, [events.run_failed(run_id, error)])
    except Exception:  # the database or channel layer is down: the stale limit still interrupts the run
        log.exception("run %s: could not check that a worker took it", run_id)


async def start_handed_over(message: dict[str, Any]) -> ActiveRun | None:
    """A worker starts a run a Daphne process handed over (see launch_run)."""
    thread = await Thread.objects.aget(pk=message["thread"])
    run = await Run.objects.aget(pk=message["run"])
    resume = await db(services.approved_calls)(run_id=run.pk) if message["resume"] else None
    turn = services.TurnStart(thread, run, message["created_thread"], user_message_id=message.get("message"))
    return await start_here(turn, resume=resume)


async def start_here(
    turn: services.TurnStart, *, resume: list[ToolCall] | None = None, setup: RunSetup | None = None
) -> ActiveRun | None:
    thread, run = turn.thread, turn.run
    inbox = None
    if not single_process():
        # The run's channel is written on the run, so that other processes know it is taken and live.
        layer = get_channel_layer()
        address = await layer.new_channel()
        if not await db(run_owners.take)(run_id=run.pk, owner=address):
            return None  # cancelled before any process took it
        await layer.group_add(run_group(thread.pk), address)
        inbox = asyncio.get_running_loop().create_task(_read_inbox(thread.pk, run.pk, address), name=f"inbox-{run.pk}")
    if run.pk in _stopped_before_start:  # Stop came first (see cancel); no await from here to the task's start
        _stopped_before_start.discard(run.pk)
        return None
    recorder = RunRecorder(
        thread_id=thread.pk,
        run_id=run.pk,
        # Crash safety only: the text is written at the message's end and when a page asks (chat/recorder.py).
        flush_interval=settings.AGENTWEB_FLUSH_INTERVAL,
        window=settings.AGENTWEB_COALESCE_WINDOW,
        steps=run.steps,
    )
    task = asyncio.get_running_loop().create_task(
        execute_run(
            thread,
            run,
            recorder,
            announce=turn.created_thread,
            user_message=turn.user_message_id,
            resume=resume,
            setup=setup,
        ),
        name=f"run-{run.pk}",
    )
    active = ActiveRun(run.pk, task, recorder, inbox)
    ACTIVE_RUNS[thread.pk] = active
    return active


async def execute_run(
    thread: Thread,
    run: Run,
    recorder: RunRecorder,
    *,
    announce: bool,
    user_message: int | None = None,
    resume: list[ToolCall] | None,
    setup: RunSetup | None = None,
) -> None:
    emit = recorder.emit
    heartbeat = asyncio.create_task(_beat(run.pk))
    try:
        if announce:
            await emit(events.thread_created(thread.title))
            await tell_user(
                thread.owner_id, events.thread_listed(str(thread.pk), thread.title), news_to_followers=False
            )
        # The user message's id: the tab that sent it shows it already, without its id.
        await emit(events.run_started(run.pk, Run.Status.RUNNING, resumed=bool(resume), message=user_message))
        if setup is None:
            setup = await db(prepare_run)(thread, run=None if resume else run)
        config, toolset, granted, history = setup.config, setup.toolset, setup.granted, setup.history
        recorder.last_order = setup.last_order
        recorder.reserved_message_id = setup.message_id
        context = setup.context
        provider = build_provider(config, demo_delay=settings.AGENTWEB_DEMO_DELAY)
        decided = _prepare_resume(recorder, resume or [])
        outcome = await run_agent(
            provider=provider,
            messages=history,
            toolbox=RegistryToolbox(toolset.registry, disabled=toolset.disabled, context=context),
            sink=recorder,
            max_steps=max(run.step_limit - run.steps, 0),
            policy=ThreadApprovalPolicy(toolset, granted),
            resume=decided,
            budget=context_budget(config),
        )
        if outcome.reason == "waiting":
            await _pause(recorder)
        else:
            await _finish(recorder, Run.Status.COMPLETED, reason=outcome.reason)
            await emit(events.run_completed(run.pk, outcome.reason, recorder.steps))
    except asyncio.CancelledError:
        if _server_stopping:  # the server stops (interrupt_live_runs): kept as a stale sweep would have it
            await recorder.abort("error")
            await _finish(recorder, Run.Status.INTERRUPTED, error=services.STOPPED_SERVER_ERROR)
            await emit(events.run_failed(run.pk, services.STOPPED_SERVER_ERROR))
            return
        await recorder.abort("cancelled")
        await _finish(recorder, Run.Status.CANCELLED)
        await emit(events.run_cancelled(run.pk))
    except (ModelError, AgentGaveUp) as error:
        await _fail(recorder, str(error))
    except Exception as error:
        log.exception("run %s failed", run.pk)
        await _fail(recorder, f"The run stopped on an internal error ({type(error).__name__}); see the server log.")
    finally:
        heartbeat.cancel()
        recorder.coalescer.close()
        active = ACTIVE_RUNS.get(thread.pk)
        if active and active.run_id == run.pk:
            del ACTIVE_RUNS[thread.pk]
            if active.inbox is not None:
                active.inbox.cancel()


@dataclass(frozen=True)
class RunSetup:
    config: ModelConfig
    toolset: ToolSet
    context: Any
    granted: set[str]
    history: list
    last_order: int  # the first answer's, when it was inserted
    # The run's first answer, inserted here so that its first token need not wait for its id (None: not inserted).
    message_id: int | None = None


def prepare_run(thread: Thread, *, run: Run | None = None) -> RunSetup:
    """Everything a run reads before its first model request, in one trip to the database thread.

    `thread` was read when the run was opened or resumed (its model choice is current: a change of model while a
    run is active applies to the next run). `run`: a run that starts with a model request (not a resumed step,
    whose results come first): its first answer's message is inserted now, after the history is read, so that its
    first token need not wait for an INSERT."""
    owner = thread.owner
    granted, groups, stamp = services.grants_groups_and_stamp(thread_id=thread.pk, user_id=owner.pk)
    config, _ = config_for(thread.model_choice, stamp=stamp)
    toolset = toolset_for_stamp(user=owner, groups=groups, stamp=stamp)
    history, last_order = services.history_and_last_order(
        thread_id=thread.pk, system_prompt=settings.AGENTWEB_SYSTEM_PROMPT
    )
    context = tool_context_factory(owner, thread.pk, groups)
    message_id = None
    if run is not None and run.steps < run.step_limit:
        last_order += 1
        message_id = services.create_assistant_message(thread_id=thread.pk, run_id=run.pk, order=last_order)
    return RunSetup(config, toolset, context, granted, history, last_order, message_id)


def _prepare_resume(recorder: RunRecorder, approved: list[ToolCall]) -> list[DecidedCall]:
    recorder.resume_with(approved)
    return [DecidedCall(c.index, ToolCallRequest(c.call_id, c.name, c.args)) for c in approved]


async def _beat(run_id: int) -> None:
    while True:
        await asyncio.sleep(settings.AGENTWEB_HEARTBEAT_SECONDS)
        await db(services.heartbeat)(run_id=run_id)


async def _pause(recorder: RunRecorder) -> None:
    waiting = [str(c.id) for c in recorder.calls.values() if c.is_open()]
    await db(services.pause_run)(run_id=recorder.run_id, steps=recorder.steps)
    await recorder.emit(events.run_waiting(recorder.run_id, waiting))


async def _fail(recorder: RunRecorder, message: str) -> None:
    try:
        await recorder.abort("error")
    except Exception:  # what the run holds could not be written: the run still fails, rather than stay running
        log.exception("run %s: its partial answer could not be written", recorder.run_id)
    await _finish(recorder, Run.Status.FAILED, error=message)
    await recorder.emit(events.run_failed(recorder.run_id, message))


async def _finish(recorder: RunRecorder, status: str, *, reason: str = "", error: str = "") -> None:
    if recorder.reserved_message_id is not None:  # the run stopped before its first model request
        await db(services.discard_message)(message_id=recorder.reserved_message_id)
        recorder.reserved_message_id = None
    await db(services.finish_run)(
        run_id=recorder.run_id,
        status=status,
        reason=reason,
        error=error,
        steps=recorder.steps,
    )


# --- decisions, cancel -------------------------------------------------------------------------


class InvalidArguments(Exception):
    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


async def decide(*, user, tool_call_id: str, decision: str, args=None, message: str = "", for_thread=False):
    """Apply a person's decision; when it was the last one the paused step needed, resume the run."""
    call = await db(services.get_tool_call_for_user)(user, tool_call_id)
    if call.approval is not None and not call.approval.get(decision):
        raise services.DecisionNotOffered(decision)
    if decision == "edit":
        tool = (await db(load_toolset)(user)).registry.get(call.name)
        problems = validation_errors(tool, args) if tool else []
        if problems:
            raise InvalidArguments(problems)
    decided = await db(services.decide_tool_call)(
        user=user, tool_call_id=tool_call_id, decision=decision, args=args, message=message, for_thread=for_thread
    )
    call = decided.tool_call
    told = [
        events.tool_call_decided(
            str(call.pk), decision, call.args, call.original_args, message or None, user.get_username()
        )
    ]
    if decided.result is not None:
        told.append(events.tool_call_completed(str(call.pk), decided.status, decided.result))
    await live.publish(decided.thread_id, told)
    if decided.all_decided:
        await resume_run(decided.thread_id, decided.run_id)


async def resume_run(thread_id: uuid.UUID, run_id: int) -> bool:
    if not await db(services.claim_waiting_run)(run_id=run_id):
        return False  # another decision, in this process or another, resumed it first
    thread = await Thread.objects.aget(pk=thread_id)
    run = await Run.objects.aget(pk=run_id)
    approved = await db(services.approved_calls)(run_id=run_id)
    await launch_run(services.TurnStart(thread=thread, run=run, created_thread=False), resume=approved)
    return True


# Runs this process stopped before their task started (see cancel): start_here does not start them.
_stopped_before_start: set[int] = set()


async def cancel(thread_id: uuid.UUID) -> bool:
    """Stop the thread's run: a streaming one at once, a waiting one by cancelling its waiting calls, and one that
    says running while no task runs it (something failed between opening it and starting its task) in the
    database: Stop always ends the thread's run."""
    active = ACTIVE_RUNS.get(thread_id)
    if active is not None and not active.task.done():
        active.task.cancel()
        return True
    if not single_process():
        return await _cancel_elsewhere(thread_id)
    cancelled = await db(services.cancel_waiting_run)(thread_id=thread_id, running_too=True)
    if cancelled is None:
        return False
    run_id, call_ids = cancelled
    if _stop_task_started_meanwhile(thread_id, run_id):
        return True
    await live.publish(thread_id, _cancelled(run_id, call_ids))
    return True


def _cancelled(run_id: int, call_ids: list[str]) -> list[events.Event]:
    """What tabs are told of a run stopped in the database: its waiting calls, then the run."""
    return [*(events.tool_call_cancelled(call_id) for call_id in call_ids), events.run_cancelled(run_id)]


def _stop_task_started_meanwhile(thread_id: uuid.UUID, run_id: int) -> bool:
    """After the database cancelled a run no task of this process ran: its task may have started meanwhile (it is
    cancelled, and says so itself: True), or may start later (start_here then does not start it)."""
    active = ACTIVE_RUNS.get(thread_id)
    if active is not None and active.run_id == run_id:
        active.task.cancel()
        return True
    _stopped_before_start.add(run_id)
    return False


async def _cancel_elsewhere(thread_id: uuid.UUID) -> bool:
    """With several processes: the run streams in another process (tell its group), waits for a worker to take
    it (cancel it before one does), or waits for a person (cancel its waiting calls here)."""
    live_run = await db(run_owners.live_run)(thread_id=thread_id, stale_before=stale_before())
    if live_run is not None and live_run.owner:
        await get_channel_layer().group_send(run_group(thread_id), {"type": "run.cancel", "run": live_run.run_id})
        return True
    if live_run is not None and await db(run_owners.cancel_untaken)(run_id=live_run.run_id):
        await live.publish(thread_id, [events.run_cancelled(live_run.run_id)])
        return True
    cancelled = await db(services.cancel_waiting_run)(thread_id=thread_id)
    if cancelled is None:
        return False
    await live.publish(thread_id, _cancelled(*cancelled))
    return True


# --- a live run's group: how other processes reach it ---------------------------------------


def run_group(thread_id: uuid.UUID | str) -> str:
    """The group that the thread's live run reads (when several processes share the load)."""
    return f"run.{thread_id}"


async def _read_inbox(thread_id: uuid.UUID, run_id: int, address: str) -> None:
    """What other processes send to the run: a Stop (`run.cancel`), a request for the thread's state (`run.replay`)."""
    layer = get_channel_layer()
    try:
        while True:
            message = await layer.receive(address)
            try:
                if message["type"] == "run.cancel" and message.get("run") == run_id:
                    active = ACTIVE_RUNS.get(thread_id)
                    if active is not None and active.run_id == run_id:
                        active.task.cancel()
                elif message["type"] == "run.replay":
                    await _replay(thread_id, message)
            except Exception:
                log.exception("run %s: handling %r from another process failed", run_id, message.get("type"))
    finally:
        await asyncio.shield(layer.group_discard(run_group(thread_id), address))


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
    live_run = await db(run_owners.live_run)(thread_id=thread.pk, stale_before=stale_before())
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
    return json.dumps(await db(services.build_snapshot)(thread=thread, seq=seq, model=model), ensure_ascii=False)


async def _live_snapshot_texts(thread: Thread, active: ActiveRun, model: dict[str, Any]) -> list[str]:
    """The thread whose run streams in this process: the database's state with what the run holds laid over it,
    as of the run's last event, then the events published after that one. Nothing is written for it, and the
    stream goes on meanwhile."""
    view = active.recorder.live_view()
    if view is None:  # the run has published nothing yet: it holds nothing the database lacks
        return [await stored_snapshot_text(thread, model)]
    snapshot = await db(services.build_snapshot)(thread=thread, seq=view.seq, model=model)
    view.lay_over(snapshot)
    return [json.dumps(snapshot, ensure_ascii=False), *(await live.read_after(thread.pk, view.seq) or [])]


async def _replay(thread_id: uuid.UUID, message: dict[str, Any]) -> None:
    """A subscriber on another process asks for the state of the thread whose run streams here."""
    thread = await Thread.objects.aget(pk=thread_id)
    active = ACTIVE_RUNS.get(thread_id)
    if active is None:
        texts = [await stored_snapshot_text(thread, message["model"])]
    else:
        texts = await _live_snapshot_texts(thread, active, message["model"])
    reply = {"type": "thread.replayed", "thread": message["thread"], "texts": texts}
    await get_channel_layer().send(message["reply_to"], reply)


# --- a clean stop of the server ----------------------------------------------------------------

# How long a stopping server waits for its live runs to write what they have.
STOP_WRITE_SECONDS = 10.0
_server_stopping = False


async def interrupt_live_runs() -> int:
    """The server stops cleanly (SIGTERM; agentweb/serve.py): every run streaming in this process writes the text it
    has streamed and its finished tool calls, and becomes interrupted (Retry offers to answer again), before the
    process exits. Waiting runs are rows, not tasks: they stay waiting. Returns how many runs were interrupted."""
    global _server_stopping
    _server_stopping = True
    tasks = [active.task for active in ACTIVE_RUNS.values() if not active.task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        _, late = await asyncio.wait(tasks, timeout=STOP_WRITE_SECONDS)
        log.info("server stopping: %d run(s) interrupted, their partial text kept", len(tasks) - len(late))
        if late:
            log.warning("server stopping: %d run(s) did not finish writing within %g s", len(late), STOP_WRITE_SECONDS)
    return len(tasks)


# --- after a restart ----------------------------------------------------------------------------

_recovered = False


async def ensure_recovered() -> None:
    """Once per process: runs a dead process left running become interrupted; waiting runs stay waiting."""
    global _recovered
    if _recovered:
        return
    _recovered = True
    cutoff = None if single_process() else stale_before()
    keep = {active.run_id for active in ACTIVE_RUNS.values()}
    threads = await db(services.interrupt_stale_runs)(stale_before=cutoff, keep=keep)
    if threads:
        log.info("marked %d run(s) left by a stopped server as interrupted", len(threads))
