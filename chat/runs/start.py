"""Opening runs: a turn (the user's message), a retry or a continue, a change of model; starting the run here or
handing it to a run worker (and failing it when no worker takes it)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction

from agents.services import agent_for_new_thread
from delivery import RUNS_CHANNEL
from modelconfig.services import check_choice
from tools.services import groups_of

from .. import live, store
from ..access import SignedOut
from ..broadcast import tell_inbox, tell_user
from ..caller import Caller
from ..live import events
from ..models import Run, Source, Thread, ToolCall
from ..store import run_claims
from .execute import RunSetup, announce_run, prepare_run, start_here
from .placement import placement
from .recovery import ensure_recovered
from .registry import ActiveRun, runs_here

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async


async def begin_turn(
    *,
    user,
    session_key: str | None,
    thread_id: str | None,
    content: str,
    client_msg_id: uuid.UUID,
    model: str | None = None,
    agent: str | None = None,
    attachments: list[str] | None = None,
    disabled_tools: list[str] | None = None,
    caller: Caller | None = None,
    history: list[tuple[str, str]] | None = None,
) -> tuple[store.TurnStart, RunSetup | None]:
    """Store the user's message and open a run (see chat.store.start_turn), once the session of `session_key` is
        found to be still `user`'s (SignedOut, and nothing written, when it is not). `model`, when given, becomes the
        thread's model: UnknownModel, and nothing written, when it is not one that can be picked. `agent`, a slug, is
    the agent a new thread takes (UnknownAgent, and nothing written, when the person may not pick it); without it a
    new thread takes the default agent, if any. It is ignored for an existing thread, and so is `disabled_tools`: the
    tools a new thread starts with turned off (store.UnknownTools, and nothing written, for a name that is not one of
    the person's tools). `caller`: who asks, when not a browser's session (an API key: chat/caller.py). `history`:
    the messages a new thread holds before this one (a program's conversation: store.start_turn).

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
        agent=agent,
        attachments=attachments,
        disabled_tools=disabled_tools,
        caller=caller or Caller.session(session_key),
        history=history,
    )
    if info is not None and turn.run is not None and not turn.created_thread:
        await announce_model(turn.thread.pk, info)
    if turn.unarchived:
        await tell_user(user.pk, events.thread_archived(str(turn.thread.pk), False))
    return turn, setup


def open_turn(
    *,
    user,
    session_key: str | None,
    thread_id: str | None,
    content: str,
    client_msg_id: uuid.UUID,
    model: str | None,
    agent: str | None = None,
    attachments: list[str] | None = None,
    disabled_tools: list[str] | None = None,
    caller: Caller | None = None,
    history: list[tuple[str, str]] | None = None,
    prepare: bool | None = None,
) -> tuple[store.TurnStart, RunSetup | None, dict[str, Any] | None]:
    """begin_turn's one trip to the database thread: the session's check, the model's, the turn, and the run's
    setup when this process runs it (a run handed to a worker, or taken by one process among others through
    chat/store/run_claims.py, prepares itself). `prepare`: read the setup (True) or not (False) whatever the
    placement says; a scheduled firing starts its run in the process that fired it (schedules/firing.py)."""
    caller = caller or Caller.session(session_key)
    current = caller.current()
    if current is None or current.pk != user.pk:
        raise SignedOut
    # A model or agent the frame names is checked against the person's groups (tools/groups.py) before anything is
    # written; the thread's own (picked before, or its agent's) is checked as the turn opens (store.start_turn).
    # A new thread reads the person's groups once here (an existing one's are kept per stamp: store.start_turn).
    groups = groups_of(current, stamp=None) if model or thread_id is None else None
    info = check_choice(model, groups=groups) if model else None
    chosen = agent_for_new_thread(current, agent) if thread_id is None else None
    turned_off = None
    if thread_id is None and disabled_tools:
        turned_off = store.checked_tool_names(user=current, names=disabled_tools)
    # One transaction: a turn whose run could not be prepared is not left open (with an active run no task runs).
    with transaction.atomic():
        turn = store.start_turn(
            user=current,
            thread_id=thread_id,
            content=content,
            client_msg_id=client_msg_id,
            model_choice=model or None,
            agent=chosen,
            attachments=attachments,
            disabled_tools=turned_off,
            source=caller.source,
            api_key_id=caller.api_key_id,
            history=history if thread_id is None else None,
            groups=groups if thread_id is None else None,
        )
        here = placement().prepares_in_turn if prepare is None else prepare
        setup = prepare_run(turn.thread, run=turn.run) if here and turn.run is not None else None
    return turn, setup, info


async def set_model(*, user, thread_id: str, model: str) -> dict[str, Any]:
    """The person picked another model for their thread: store it and tell the thread's group."""
    info = await db(checked_choice)(user, model)
    thread = await db(store.set_thread_model)(user=user, thread_id=thread_id, model_choice=model)
    await announce_model(thread.pk, info)
    return info


def checked_choice(user, model: str) -> dict[str, Any]:
    """check_choice for `user`: UnknownModel when their groups do not allow the model (or there is none such)."""
    return check_choice(model, groups=groups_of(user, stamp=None))


async def set_tool(*, user, thread_id: str, tool: str, enabled: bool) -> list[str]:
    """The person turned a tool on or off for their thread (store.set_tool_enabled): store it and tell the thread's
    group, so that every tab's Tools panel agrees."""
    turned_off = await db(store.set_tool_enabled)(user=user, thread_id=thread_id, tool=tool, enabled=enabled)
    thread = uuid.UUID(str(thread_id))
    await live.publish(thread, [events.thread_tools_changed(turned_off)])
    return turned_off


async def announce_model(thread_id: uuid.UUID, info: dict[str, Any]) -> None:
    await live.publish(thread_id, [events.thread_model_changed(info)])


async def begin_followup(
    *, user, thread_id: str, kind: str, steps: int | None = None, caller: Caller | None = None
) -> store.TurnStart:
    """`retry` a run that failed, was interrupted or cancelled; `continue` one that hit its step limit. `caller`: who
    asks, when not a browser's session (an API key: its run is marked as the API's, with the key)."""
    await ensure_recovered()
    return await db(store.start_followup_run)(
        user=user,
        thread_id=thread_id,
        kind=kind,
        step_limit=steps,  # None: the thread's agent's limit, else AGENTWEB_MAX_STEPS
        source=caller.source if caller is not None else Source.CHAT,
        api_key_id=caller.api_key_id if caller is not None else None,
    )


async def launch_run(
    turn: store.TurnStart, *, resume: list[ToolCall] | None = None, setup: RunSetup | None = None
) -> ActiveRun | None:
    """Start the run here, or with AGENTWEB_RUN_WORKERS hand it to whichever worker reads the runs channel. A run
    that waits for decisions (a retry that asks again) is not a task: its events say so, the decisions resume it.
    `setup`: what the run reads before its model request, read already (begin_turn)."""
    if turn.awaiting:
        await announce_waiting(turn)
        return None
    if placement().hands_over:
        # Told here rather than by the worker: the page learns its new chat and sees the run wait at once, and a
        # failure when no worker takes it reaches it live (a page only follows a thread it knows).
        thread = turn.thread

        async def emit(event: events.Event) -> None:
            await live.publish(thread.pk, [event])

        await announce_run(
            thread,
            turn.run,
            emit,
            created=turn.created_thread,
            resumed=bool(resume),
            user_message=turn.user_message,
        )
        await live.delivery().send(
            RUNS_CHANNEL,
            {
                "type": "run.launch",
                "thread": str(turn.thread.pk),
                "run": turn.run.pk,
                "created_thread": turn.created_thread,
                "resume": resume is not None,
                "user_message": turn.user_message,
                "answer": turn.answer_message_id,
                "announced": True,
            },
        )
        _watch_handover(turn.thread.pk, turn.run.pk)
        return None
    return await start_here(turn, resume=resume, setup=setup)


async def fail_unlaunched(turn: store.TurnStart, error: str) -> None:
    """A turn written but never handed on (Redis went out of reach between the two): its run fails with `error`,
    and can be retried, rather than stay running until the stale limit."""
    if turn.run is not None and await db(run_claims.fail_untaken)(run_id=turn.run.pk, error=error):
        log.info("run %s: failed as it started, the server could not reach Redis", turn.run.pk)


async def announce_waiting(turn: store.TurnStart) -> None:
    run_id = turn.run.pk
    told = [events.run_started(run_id, Run.Status.WAITING)]
    told += [events.tool_call_awaiting_approval(call, allow) for call, allow in turn.awaiting]
    told.append(events.run_waiting(run_id, [call for call, _ in turn.awaiting]))
    await live.publish(turn.thread.pk, told)
    await tell_inbox(turn.thread.pk, "waiting", [call for call, _ in turn.awaiting], owner_id=turn.thread.owner_id)


NO_WORKER = (
    "No run worker took this run within {seconds:g} s. This server hands runs to `manage.py runworker "
    "agentweb-runs` processes (AGENTWEB_RUN_WORKERS); is one running? Retry when it is."
)


def _watch_handover(thread_id: uuid.UUID, run_id: int) -> None:
    """Without a worker running, a handed-over run would say "running" until the stale limit: fail it with
    a message that says why, after AGENTWEB_RUN_HANDOVER_SECONDS, unless a worker has taken it by then."""
    runs_here().in_background(_fail_if_untaken(thread_id, run_id, settings.AGENTWEB_RUN_HANDOVER_SECONDS))


async def _fail_if_untaken(thread_id: uuid.UUID, run_id: int, seconds: float) -> None:
    await asyncio.sleep(seconds)
    error = NO_WORKER.format(seconds=seconds)
    try:
        if await db(run_claims.fail_untaken)(run_id=run_id, error=error):
            log.warning("run %s: no worker took it within %g s", run_id, seconds)
            await live.publish(thread_id, [events.run_failed(run_id, error)])
    except Exception:  # the database or channel layer is down: the stale limit still interrupts the run
        log.exception("run %s: could not check that a worker took it", run_id)


async def start_handed_over(message: dict[str, Any]) -> ActiveRun | None:
    """A worker starts a run a Daphne process handed over (see launch_run)."""
    thread, run, resume = await db(read_handed_over)(
        thread_id=message["thread"], run_id=message["run"], resume=message["resume"]
    )
    turn = store.TurnStart(
        thread,
        run,
        message["created_thread"],
        user_message=message.get("user_message"),
        answer_message_id=message.get("answer"),
    )
    # A Daphne process from before "announced" left the announcing to the worker.
    return await start_here(turn, resume=resume, announced=message.get("announced", False))


def read_handed_over(*, thread_id: str, run_id: int, resume: bool) -> tuple[Thread, Run, list[ToolCall] | None]:
    """A handed-over run's thread (with its owner, whom prepare_run reads), the run, and the calls it resumes with:
    one trip to the worker's database thread, which every run's reads and writes share."""
    thread = Thread.objects.select_related("owner").get(pk=thread_id)
    run = Run.objects.get(pk=run_id)
    return thread, run, store.approved_calls(run_id=run.pk) if resume else None
