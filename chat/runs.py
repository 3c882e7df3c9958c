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

from . import mailbox, run_owners, services
from .access import current_user
from .agent import AgentGaveUp, DecidedCall, RegistryToolbox, run_agent
from .broadcast import ThreadChannel, channel_for, group_name, known_channel, tell_user
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
    channel: ThreadChannel
    recorder: RunRecorder


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
    model = {key: info[key] for key in ("id", "label", "is_demo")}
    await emit_outside_run(thread_id, [("thread.model_changed", {"model": model})])


async def emit_outside_run(thread_id: uuid.UUID, events: list[tuple[str, dict[str, Any]]]) -> None:
    """Events of a thread that no run of this process emits: decisions, model changes, rewinds.

    One process numbers a thread's events at a time: while a run streams, the process running it (these
    events are sent there when that is another process); otherwise the database hands out the numbers.
    """
    if single_process() or thread_id in ACTIVE_RUNS:
        channel = await channel_for(thread_id)
        for type_, fields in events:
            await channel.emit(type_, **fields)
        await db(services.bump_seq)(thread_id=thread_id, last_seq=channel.seq)
        return
    first, owner = await db(run_owners.reserve_seqs_unless_owned)(
        thread_id=thread_id, count=len(events), stale_before=stale_before(), own_address=mailbox.own_address()
    )
    if owner is not None:
        await mailbox.send(
            owner, {"type": "thread.emit", "thread": str(thread_id), "events": [list(e) for e in events]}
        )
        return
    channel = await channel_for(thread_id)
    await channel.emit_numbered(first, events)


@mailbox.handles("thread.emit")
async def _emit_for_another_process(message: dict[str, Any]) -> None:
    thread_id = uuid.UUID(message["thread"])
    await emit_outside_run(thread_id, [(type_, fields) for type_, fields in message["events"]])


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
    events: list[tuple[str, dict[str, Any]]] = [
        ("run.started", {"run": {"id": run_id, "status": Run.Status.WAITING, "resumed": False}})
    ]
    events += [("tool_call.awaiting_approval", {"tool_call": call, "allow": allow}) for call, allow in turn.awaiting]
    events.append(("run.waiting", {"run": run_id, "tool_calls": [call for call, _ in turn.awaiting]}))
    await emit_outside_run(turn.thread.pk, events)


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
            await emit_outside_run(thread_id, [("run.failed", {"run": run_id, "error": error})])
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
    channel = await channel_for(thread.pk)
    if not single_process():
        # Written on the run so that other processes can reach it; the numbering goes on from the
        # database's, as another process may have numbered events of this thread since.
        last_seq = await db(run_owners.take)(run_id=run.pk, owner=await mailbox.address())
        if last_seq is None:
            return None  # cancelled before any process took it
        async with channel.lock:
            channel.resync(last_seq)
    if run.pk in _stopped_before_start:  # Stop came first (see cancel); no await from here to the task's start
        _stopped_before_start.discard(run.pk)
        return None
    recorder = RunRecorder(
        channel=channel,
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
    active = ActiveRun(run.pk, task, channel, recorder)
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
    channel = recorder.channel
    heartbeat = asyncio.create_task(_beat(run.pk))
    try:
        if announce:
            await channel.emit("thread.created", title=thread.title)
            await tell_user(
                thread.owner_id, "thread.listed", thread=str(thread.pk), title=thread.title, news_to_followers=False
            )
        started = {"run": {"id": run.pk, "status": Run.Status.RUNNING, "resumed": bool(resume)}}
        if user_message is not None:  # the tab that sent it shows it already, without its id
            started["message"] = user_message
        await channel.emit("run.started", **started)
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
            await channel.emit("run.completed", run=run.pk, reason=outcome.reason, steps=recorder.steps)
    except asyncio.CancelledError:
        if _server_stopping:  # the server stops (interrupt_live_runs): kept as a stale sweep would have it
            await recorder.abort("error")
            await _finish(recorder, Run.Status.INTERRUPTED, error=services.STOPPED_SERVER_ERROR)
            await channel.emit("run.failed", run=run.pk, error=services.STOPPED_SERVER_ERROR)
            return
        await recorder.abort("cancelled")
        await _finish(recorder, Run.Status.CANCELLED)
        await channel.emit("run.cancelled", run=run.pk)
    except (ModelError, AgentGaveUp) as error:
        await _fail(recorder, str(error))
    except Exception as error:
        log.exception("run %s failed", run.pk)
        await _fail(recorder, f"The run stopped on an internal error ({type(error).__name__}); see the server log.")
    finally:
        heartbeat.cancel()
        recorder.coalescer.close()
        if ACTIVE_RUNS.get(thread.pk) and ACTIVE_RUNS[thread.pk].run_id == run.pk:
            del ACTIVE_RUNS[thread.pk]


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
    await db(services.pause_run)(run_id=recorder.run_id, steps=recorder.steps, last_seq=recorder.channel.seq + 1)
    await recorder.channel.emit("run.waiting", run=recorder.run_id, tool_calls=waiting)


async def _fail(recorder: RunRecorder, message: str) -> None:
    try:
        await recorder.abort("error")
    except Exception:  # what the run holds could not be written: the run still fails, rather than stay running
        log.exception("run %s: its partial answer could not be written", recorder.run_id)
    await _finish(recorder, Run.Status.FAILED, error=message)
    await recorder.channel.emit("run.failed", run=recorder.run_id, error=message)


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
        # The run's own closing event is emitted after this, so reserve its number.
        last_seq=recorder.channel.seq + 1,
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
    events = [
        (
            "tool_call.decided",
            {
                "tool_call": str(call.pk),
                "decision": decision,
                "args": call.args,
                "original_args": call.original_args,
                "message": message or None,
                "by": user.get_username(),
            },
        )
    ]
    if decided.result is not None:
        events.append(
            (
                "tool_call.completed",
                {
                    "tool_call": str(call.pk),
                    "status": decided.status,
                    "content": decided.result,
                    "has_artifact": False,
                    "duration_ms": None,
                },
            )
        )
    await emit_outside_run(decided.thread_id, events)
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
    channel = await channel_for(thread_id)
    async with channel.lock:  # reserve the numbers of the events below before writing them down
        cancelled = await db(services.cancel_waiting_run)(
            thread_id=thread_id, last_seq=channel.seq + 1, running_too=True
        )
    if cancelled is None:
        return False
    run_id, call_ids = cancelled
    if _stop_task_started_meanwhile(thread_id, run_id):
        return True
    for call_id in call_ids:
        await channel.emit(
            "tool_call.completed",
            tool_call=call_id,
            status="cancelled",
            content=services.INTERRUPTED_RESULT,
            has_artifact=False,
            duration_ms=None,
        )
    await channel.emit("run.cancelled", run=run_id)
    await db(services.bump_seq)(thread_id=thread_id, last_seq=channel.seq)
    return True


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
    """With several processes: the run streams in another process (tell it), waits for a worker to take it
    (cancel it before one does), or waits for a person (cancel its waiting calls here)."""
    live = await db(run_owners.live_run)(thread_id=thread_id, stale_before=stale_before())
    if live is not None and live.owner and live.owner != mailbox.own_address():
        await mailbox.send(live.owner, {"type": "run.cancel", "thread": str(thread_id)})
        return True
    if live is not None and not live.owner and await db(run_owners.cancel_untaken)(run_id=live.run_id):
        await emit_outside_run(thread_id, [("run.cancelled", {"run": live.run_id})])
        return True
    # This process owns a running run that no task of it runs (see cancel): it is cancelled here too.
    orphan = live is not None and live.owner == mailbox.own_address()
    cancelled = await db(services.cancel_waiting_run)(thread_id=thread_id, last_seq=None, running_too=orphan)
    if cancelled is None:
        return False
    run_id, call_ids = cancelled
    if orphan and _stop_task_started_meanwhile(thread_id, run_id):
        return True
    events = [
        (
            "tool_call.completed",
            {
                "tool_call": call_id,
                "status": "cancelled",
                "content": services.INTERRUPTED_RESULT,
                "has_artifact": False,
                "duration_ms": None,
            },
        )
        for call_id in call_ids
    ]
    await emit_outside_run(thread_id, [*events, ("run.cancelled", {"run": run_id})])
    return True


@mailbox.handles("run.cancel")
async def _cancel_for_another_process(message: dict[str, Any]) -> None:
    thread_id = uuid.UUID(message["thread"])
    active = ACTIVE_RUNS.get(thread_id)
    if active is not None and not active.task.done():
        active.task.cancel()
    else:  # the run says this process runs it, and no task does: it is cancelled in the database
        await _cancel_elsewhere(thread_id)


# --- what a subscriber is sent first ------------------------------------------------------------


async def subscribe_texts(
    thread: Thread, after_seq: int | None, model: dict[str, Any], *, reply_to: str | None = None
) -> list[str] | None:
    """The events after `after_seq` when this process still has them all, else a snapshot.

    None: the thread's run streams in another process, which sends them to `reply_to` itself, in order
    with the run's next events (a `thread.replayed` message).
    """
    await ensure_recovered()
    if single_process() or thread.pk in ACTIVE_RUNS:
        return await _texts_here(thread, after_seq, model)
    live = await db(run_owners.live_run)(thread_id=thread.pk, stale_before=stale_before())
    if reply_to and live is not None and live.owner and live.owner != mailbox.own_address():
        request = {"thread": str(thread.pk), "after_seq": after_seq, "model": model, "reply_to": reply_to}
        await mailbox.send(live.owner, {"type": "thread.replay", **request})
        return None
    # No run streams anywhere: the database holds the thread exactly as of its last number.
    return [await stored_snapshot_text(thread, model)]


async def stored_snapshot_text(thread: Thread, model: dict[str, Any]) -> str:
    seq = await db(services.current_seq)(thread_id=thread.pk)
    return json.dumps(await db(services.build_snapshot)(thread=thread, seq=seq, model=model), ensure_ascii=False)


async def _texts_here(thread: Thread, after_seq: int | None, model: dict[str, Any]) -> list[str]:
    channel = known_channel(thread.pk)
    if channel is None:
        return [await stored_snapshot_text(thread, model)]
    # Hold the thread's events while reading, so the snapshot is exactly the state as of its seq.
    async with channel.lock:
        return await _texts_locked(thread, channel, after_seq, model)


async def _texts_locked(thread: Thread, channel: ThreadChannel, after_seq: int | None, model) -> list[str]:
    texts = channel.events_after(after_seq) if after_seq is not None else None
    if texts is not None:
        return texts
    active = ACTIVE_RUNS.get(thread.pk)
    if active is not None:
        await active.recorder.save_now()
    snapshot = await db(services.build_snapshot)(thread=thread, seq=channel.seq, model=model)
    return [json.dumps(snapshot, ensure_ascii=False)]


@mailbox.handles("thread.replay")
async def _replay_for_another_process(message: dict[str, Any]) -> None:
    """A subscriber on another process asks for the state of a thread whose run streams here."""
    thread = await Thread.objects.aget(pk=message["thread"])
    reply = {"type": "thread.replayed", "thread": message["thread"]}
    channel = known_channel(thread.pk)
    if channel is None or thread.pk not in ACTIVE_RUNS:
        text = await stored_snapshot_text(thread, message["model"])
        await mailbox.send(message["reply_to"], {**reply, "texts": [text]})
        return
    async with channel.lock:
        texts = await _texts_locked(thread, channel, message["after_seq"], message["model"])
        # Sent before the lock lets the run's next event out, so the subscriber gets them in order.
        await mailbox.send(message["reply_to"], {**reply, "texts": texts})


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
