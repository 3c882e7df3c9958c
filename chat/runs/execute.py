"""A run's task: what it reads before its first model request (prepare_run), the agent loop with its tools and
approval policy, its heartbeat, and how it ends (completed, waiting, cancelled, failed, interrupted)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from agents.services import AgentSpec, agent_spec, model_choice, restrict_toolset, system_prompt, with_sampling
from delivery import REDIS_GONE
from languages.models import LanguageChoice
from languages.sockets import said_in
from modelconfig.services import config_for
from providers.budget import CHARS_PER_TOKEN, DEFAULT_RESERVE, ContextBudget
from providers.config import ModelConfig, build_provider
from providers.context_strategy import ContextStrategy
from providers.structured import AnswerFormat
from providers.types import ModelError, ToolCallRequest
from tools.context import ToolContext, ToolUser
from tools.groups import NotPermitted
from tools.services import ToolSet, toolset_for_stamp, toolset_for_user
from tools.store import DatabaseStore

from .. import notify, store
from ..agent import AgentGaveUp, DecidedCall, RegistryToolbox, run_agent
from ..broadcast import tell_inbox, tell_user
from ..flush import forget_text
from ..live import events
from ..live.views import SentMessageView
from ..models import Message, Run, Source, Thread, ToolCall
from ..recorder import RunRecorder
from ..summaries import Summariser, apply_strategy
from ..usage import Meter
from . import recovery
from .cancel import read_inbox
from .heartbeat import beat_while_running, stop_beating
from .interaction import InteractiveToolbox, RunInteraction, for_recorder
from .placement import placement
from .registry import ActiveRun, runs_here

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async


def context_budget(config: ModelConfig) -> ContextBudget | None:
    if not config.context_window:
        return None
    return ContextBudget(
        config.context_window,
        reserve=config.max_tokens or DEFAULT_RESERVE,
        protocol=(config.tool_protocol or "native").lower(),
    )


# --- what the run is asked for: a structured answer, a context strategy ------------------


@dataclass(frozen=True)
class RunOptions:
    """The run's parameters beyond its model and tools. `answer`: its final answer is a JSON value of this schema
    (providers/structured.py); None: plain text. `context`: how its history is cut (providers/context_strategy.py);
    None: trimmed to the window, as always."""

    answer: AnswerFormat | None = None
    context: ContextStrategy | None = None


def run_options(thread: Thread, agent: AgentSpec | None = None) -> RunOptions:
    """The options of a run on `thread` with its `agent` (called in prepare_run, on the database thread, with the
    thread as loaded): the agent's structured final answer and context strategy (docs/agents.md); none without an
    agent (plain text, trimmed to the window)."""
    if agent is None:
        return RunOptions()
    answer = AnswerFormat(agent.response_schema, name=agent.slug) if agent.response_schema else None
    context = ContextStrategy.from_mapping(agent.context_strategy) if agent.context_strategy else None
    return RunOptions(answer=answer, context=context)


# --- which tools, and which of their calls wait for a person ----------------------------


def load_toolset(user) -> ToolSet:
    """The tools `user` may use now, with the admin's settings applied (tools/services.py)."""
    return toolset_for_user(user=user)


def tool_context_factory(user, thread_id: uuid.UUID, groups: frozenset[str] | None = None, attachments: tuple = ()):
    """What each tool call of this run may be injected with: the user, the thread, the call id, the store, the
    attachments of the thread's last user message. `groups`: the user's group names, when the caller read them
    already."""
    if groups is None:
        groups = frozenset(user.groups.values_list("name", flat=True))
    tool_user = ToolUser(id=user.pk, username=user.get_username(), groups=groups)
    kv_store = DatabaseStore(user.pk)

    async def search(query: str, limit: int) -> list[dict[str, Any]]:
        return await db(store.search_messages)(user=user, query=query, limit=limit)

    def context(call: ToolCallRequest) -> ToolContext:
        return ToolContext(
            user=tool_user,
            thread_id=str(thread_id),
            tool_call_id=call.id,
            store=kv_store,
            search_messages=search,
            attachments=attachments,
        )

    return context


class ThreadApprovalPolicy:
    """A call waits when the admin's rules for its arguments say so, else when its tool requires approval (or the
    thread's agent's override says so); never when the person approved that tool for the rest of the thread, nor
    for a tool the thread's agent does not have or the person turned off for the thread (it does not run: its
    result says so)."""

    def __init__(
        self,
        toolset: ToolSet,
        granted: set[str],
        agent: AgentSpec | None = None,
        turned_off: frozenset[str] = frozenset(),
    ):
        self.toolset = toolset
        self.granted = granted
        self.agent = agent
        self.turned_off = turned_off

    def requirement(self, call: ToolCallRequest) -> dict[str, bool] | None:
        if call.name in self.granted or call.name in self.turned_off:
            return None
        if self.agent is not None and not self.agent.allows(call.name):
            return None
        return self.toolset.requirement(call.name, call.args)


async def start_here(
    turn: store.TurnStart,
    *,
    resume: list[ToolCall] | None = None,
    setup: RunSetup | None = None,
    announced: bool = False,
    taken_as: str = "",
) -> ActiveRun | None:
    """Start the run in this process. `announced`: the process that handed it over published its thread.created
    and run.started already (chat/runs/start.py launch_run). `taken_as`: the inbox address the trip that opened the
    run took it with (placement().inbox_address(); a scheduled firing, schedules/firing.py)."""
    thread, run = turn.thread, turn.run
    taken = await placement().take(thread.pk, run.pk, read_inbox, written=taken_as)
    if taken is None:
        return None  # cancelled before any process took it
    here = runs_here()
    if run.pk in here.stopped_before_start:  # Stop came first (see cancel); no await from here to the task's start
        here.stopped_before_start.discard(run.pk)
        return None
    recorder = RunRecorder(
        thread_id=thread.pk,
        run_id=run.pk,
        # Crash safety only: the text is written at the message's end and when a page asks (chat/flush.py).
        flush_interval=settings.AGENTWEB_FLUSH_INTERVAL,
        window=settings.AGENTWEB_COALESCE_WINDOW,
        steps=run.steps,
        owner_id=thread.owner_id,
    )
    interaction = for_recorder(recorder)
    task = asyncio.get_running_loop().create_task(
        execute_run(
            thread,
            run,
            recorder,
            announce=turn.created_thread,
            announced=announced,
            user_message=turn.user_message,
            answer_message=turn.answer_message_id,
            resume=resume,
            setup=setup,
            interaction=interaction,
        ),
        name=f"run-{run.pk}",
    )
    active = ActiveRun(run.pk, task, recorder, taken.inbox, interaction)
    here.active[thread.pk] = active
    return active


async def announce_run(
    thread: Thread,
    run: Run,
    emit,
    *,
    created: bool,
    resumed: bool,
    user_message: SentMessageView | None,
) -> None:
    """A run's start as its thread's tabs learn it: thread.created (a new thread; the person's lists are told too),
    then run.started. `emit` publishes one event to the thread's log."""
    if created:
        agent = getattr(thread, "agent_spec", None)
        if agent is None and thread.agent_id is not None:
            agent = await db(agent_spec)(thread.agent_id)
        shown = agent.public_info() if agent else None
        await emit(events.thread_created(thread.title, shown))
        await tell_user(
            thread.owner_id,
            events.thread_listed(str(thread.pk), thread.title, shown, thread.source),
            news_to_followers=False,
        )
    # The user message: the tab that sent it shows it already, without its id; the thread's other tabs not at all.
    await emit(events.run_started(run.pk, Run.Status.RUNNING, resumed=resumed, sent=user_message))


async def execute_run(
    thread: Thread,
    run: Run,
    recorder: RunRecorder,
    *,
    announce: bool,
    announced: bool = False,
    user_message: SentMessageView | None = None,
    answer_message: int | None = None,
    resume: list[ToolCall] | None,
    setup: RunSetup | None = None,
    interaction: RunInteraction | None = None,
) -> None:
    emit = recorder.emit
    interaction = interaction or for_recorder(recorder)
    beat_while_running(run.pk)
    try:
        if not announced:
            await announce_run(thread, run, emit, created=announce, resumed=bool(resume), user_message=user_message)
        if setup is None:
            setup = await db(prepare_run)(thread, run=None if resume else run, reserved=answer_message)
        config, toolset, granted, history = setup.config, setup.toolset, setup.granted, setup.history
        meter_for(recorder.meter, thread, run, config, setup.model, setup.agent)
        recorder.last_order = setup.last_order
        recorder.reserved_message_id = setup.message_id
        recorder.follows_a_failure = setup.follows_a_failure
        context = setup.context
        provider = build_provider(
            config,
            demo_delay=settings.AGENTWEB_DEMO_DELAY,
            transport=settings.AGENTWEB_LLM_TRANSPORT,
            demo_says=functools.partial(said_in, setup.language) if setup.language else None,
        )
        decided = _prepare_resume(recorder, resume or [])
        toolbox = RegistryToolbox(
            toolset.registry,
            disabled=toolset.disabled,
            context=interaction.tool_context(context),
            allowed=setup.agent.tools if setup.agent is not None else None,
            turned_off=setup.turned_off,
        )
        budget = context_budget(config)
        if budget is not None and setup.unread:
            budget = dataclasses.replace(budget, unread=True)
        if setup.options.context is not None:  # the run's context strategy (chat/summaries.py)
            summariser = Summariser(
                thread,
                run.pk,
                config,
                budget,
                recorder.meter,
                emit,
                recorder.note,
                settings.AGENTWEB_DEMO_DELAY,
                settings.AGENTWEB_LLM_TRANSPORT,
            )
            history = await apply_strategy(
                setup.options.context, history, setup.orders, toolbox.definitions(), summariser
            )
        outcome = await run_agent(
            provider=provider,
            messages=history,
            toolbox=InteractiveToolbox(toolbox, interaction),
            sink=recorder,
            max_steps=max(run.step_limit - run.steps, 0),
            policy=ThreadApprovalPolicy(toolset, granted, setup.agent, setup.turned_off),
            resume=decided,
            budget=budget,
            answer=setup.options.answer,
        )
        if outcome.reason == "waiting":
            waiting = await _pause(recorder)
            await tell_inbox(thread.pk, "waiting", waiting, owner_id=thread.owner_id)
        else:
            await _finish(recorder, Run.Status.COMPLETED, reason=outcome.reason)
            await emit(events.run_completed(run.pk, outcome.reason, recorder.steps, recorder.meter.totals))
            if run.source in (Source.SCHEDULE, Source.TRIGGER):  # nobody watched it start: its owner is told
                notify.run_finished(thread.pk, run.pk, owner_id=thread.owner_id)
    except asyncio.CancelledError:
        await interaction.close()  # open requests for input are cancelled (their forms close), before the calls
        if runs_here().stopping:  # the server stops (interrupt_live_runs): kept as a stale sweep would have it
            await recorder.abort("error")
            await _finish(recorder, Run.Status.INTERRUPTED, error=store.STOPPED_SERVER_ERROR)
            await emit(events.run_failed(run.pk, store.STOPPED_SERVER_ERROR))
            return
        await recorder.abort("cancelled")
        await _finish(recorder, Run.Status.CANCELLED)
        await emit(events.run_cancelled(run.pk))
    except REDIS_GONE:
        await _interrupt_without_redis(recorder)
    except (ModelError, AgentGaveUp, NotPermitted) as error:
        await _fail(recorder, str(error))
    except Exception as error:
        log.exception("run %s failed", run.pk)
        await _fail(recorder, f"The run stopped on an internal error ({type(error).__name__}); see the server log.")
    finally:
        stop_beating(run.pk)
        forget_text(run.pk)
        recorder.coalescer.close()
        interaction.discard()
        here = runs_here()
        active = here.active.get(thread.pk)
        if active and active.run_id == run.pk:
            del here.active[thread.pk]
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
    # What a browser may see of the model (modelconfig.services.config_for): its id and label name the usage rows.
    model: dict[str, Any] = field(default_factory=dict)
    # The thread's agent (None: none, the chat as before agents).
    agent: AgentSpec | None = None
    options: RunOptions = field(default_factory=RunOptions)
    # The order of each message of `history` (None for the system prompt, a summary, made-up results).
    orders: list[int | None] = field(default_factory=list)
    # The tools the person turned off for the thread (Thread.disabled_tools): left out of `toolset`, never run.
    turned_off: frozenset[str] = frozenset()
    # The thread ends with an answer that failed (a retry follows it): a first answer that fails too before showing
    # anything is not kept (RunRecorder.follows_a_failure).
    follows_a_failure: bool = False
    # Only the newest part of a long history was read (more than the model's window holds: prepare_run).
    unread: bool = False
    # The language the demo model's script speaks: its owner's choice, else the site's ("" for a real model).
    language: str = ""


def prepare_run(thread: Thread, *, run: Run | None = None, reserved: int | None = None) -> RunSetup:
    """Everything a run reads before its first model request, in one trip to the database thread.

    `thread` was read when the run was opened or resumed (its model choice is current: a change of model while a
    run is active applies to the next run). `run`: a run that starts with a model request (not a resumed step,
    whose results come first): its first answer's message is inserted now, after the history is read, so that its
    first token need not wait for an INSERT. `reserved`: that message when it is inserted already (a regenerate's
    new version of the answer, chat/store/versions.py)."""
    owner = thread.owner
    granted, groups, stamp = store.grants_groups_and_stamp(thread_id=thread.pk, user_id=owner.pk)
    # The thread's agent, kept in this process per stamp (no statement of its own in the steady state).
    agent = agent_spec(thread.agent_id, stamp=stamp)
    # Every run, whatever path opened it (a turn, a retry, a resumed step, a schedule, a trigger, the APIs), starts
    # only with an agent and a model the owner's groups allow now (tools/groups.py): NotPermitted fails it.
    if agent is not None:
        agent.check(owner.pk, groups)
    config, model = config_for(model_choice(thread.model_choice, agent), stamp=stamp, groups=groups)
    config = with_sampling(config, agent)
    # The agent's tools, less those the person turned off for this thread: the model is offered what is left.
    turned_off = frozenset(thread.disabled_tools or ())
    toolset = restrict_toolset(toolset_for_stamp(user=owner, groups=groups, stamp=stamp), agent).without(turned_off)
    options = run_options(thread, agent)
    summarised = options.context is not None and options.context.kind == "summarise"
    orders: list[int | None] = []
    attachments: list = []
    last: list = []
    history, last_order = store.history_and_last_order(
        thread_id=thread.pk,
        system_prompt=system_prompt(agent, username=owner.get_username()),
        # The thread's summary stands for the turns it covers only under the strategy that made it.
        summary=thread.summary if summarised else "",
        summary_through=thread.summary_through if summarised else None,
        orders=orders,
        tool_attachments=attachments,
        last_message=last,
        # With a known window, the newest messages the context budget could keep at most (summaries read theirs).
        newest_chars=CHARS_PER_TOKEN * config.context_window if config.context_window and not summarised else None,
    )
    context = tool_context_factory(owner, thread.pk, groups, attachments=tuple(attachments))
    message_id = None
    if reserved is not None:  # a regenerate inserted it (the history leaves it out), as the next version
        message_id = reserved
    elif run is not None and run.steps < run.step_limit:
        last_order += 1
        # The first answer to a user message names it: a regenerate makes versions of this answer.
        parent = last[0] if last and last[1] == Message.Role.USER else None
        message_id = store.create_assistant_message(
            thread_id=thread.pk, run_id=run.pk, order=last_order, parent_id=parent
        )
    failed = bool(last) and last[1] == Message.Role.ASSISTANT and last[2] == Message.Status.ERROR and not last[3]
    return RunSetup(
        config,
        toolset,
        context,
        granted,
        history,
        last_order,
        message_id,
        model,
        agent,
        options,
        orders,
        turned_off,
        follows_a_failure=failed,
        # Orders are contiguous along a branch from 1: a history that starts later was cut.
        unread=not summarised and next((o for o in orders if o is not None), 1) > 1,
        # Read for the demo model only: a real model answers in the language it is written to.
        language=(LanguageChoice.of(owner) or settings.LANGUAGE_CODE) if config.resolved_api == "demo" else "",
    )


def meter_for(
    meter: Meter, thread: Thread, run: Run, config: ModelConfig, model: dict[str, Any], agent: AgentSpec | None
) -> Meter:
    """The run's meter: who, which thread, agent and model, at what prices; its totals go on from a paused run's."""
    model_id = model.get("id")
    meter.user_id, meter.thread_id, meter.run_id = thread.owner_id, thread.pk, run.pk
    meter.source, meter.api_key_id = run.source, run.api_key_id  # a run through the API: its usage says with which key
    meter.model_config_id = int(model_id) if isinstance(model_id, str) and model_id.isdigit() else None
    meter.model_label = run.model_label or model.get("label", "")
    meter.agent = agent.slug if agent is not None else ""
    meter.price_input, meter.price_output = config.price_input, config.price_output
    if run.usage:
        meter.totals = {**meter.totals, **run.usage}
    return meter


def _prepare_resume(recorder: RunRecorder, approved: list[ToolCall]) -> list[DecidedCall]:
    recorder.resume_with(approved)
    return [DecidedCall(c.index, ToolCallRequest(c.call_id, c.name, c.args)) for c in approved]


async def _pause(recorder: RunRecorder) -> list[str]:
    waiting = [str(c.id) for c in recorder.calls.values() if c.is_open()]
    meter = recorder.meter
    await db(store.pause_run)(
        run_id=recorder.run_id, steps=recorder.steps, usage=meter.take_rows(), totals=meter.totals
    )
    recorder.ended = True
    await recorder.emit(events.run_waiting(recorder.run_id, waiting))
    return waiting


async def _fail(recorder: RunRecorder, message: str) -> None:
    try:
        await recorder.abort("error")
    except Exception:  # what the run holds could not be written: the run still fails, rather than stay running
        log.exception("run %s: its partial answer could not be written", recorder.run_id)
    await _finish(recorder, Run.Status.FAILED, error=message)
    await recorder.emit(events.run_failed(recorder.run_id, message))
    notify.run_failed(recorder.thread_id, recorder.run_id, owner_id=recorder.owner_id)


async def _interrupt_without_redis(recorder: RunRecorder) -> None:
    """Redis went away mid-run (restarting, out of reach): the run's events can no longer go out, so it stops, as a
    server that stops stops it: interrupted, with the text its tabs were shown, Retry offered. The tabs are told once
    Redis answers again (recovery.tell_when_redis_is_back). A run whose end was written already stays as it is."""
    told: list[events.Event] = []
    if not recorder.ended:
        log.warning("run %s: Redis is out of reach; interrupted, the text its tabs were shown kept", recorder.run_id)
        try:
            told = await recorder.keep_shown()
        except Exception:  # the database out of reach too: the run still ends, rather than stay running
            log.exception("run %s: its partial answer could not be written", recorder.run_id)
        await _finish(recorder, Run.Status.INTERRUPTED, error=store.LOST_REDIS_ERROR)
        told.append(events.run_failed(recorder.run_id, store.LOST_REDIS_ERROR))
    recovery.tell_when_redis_is_back(recorder.thread_id, told)


async def _finish(recorder: RunRecorder, status: str, *, reason: str = "", error: str = "") -> None:
    if recorder.reserved_message_id is not None:  # the run stopped before its first model request
        await db(store.discard_message)(message_id=recorder.reserved_message_id)
        recorder.reserved_message_id = None
    meter = recorder.meter
    await db(store.finish_run)(
        run_id=recorder.run_id,
        status=status,
        reason=reason,
        error=error,
        steps=recorder.steps,
        usage=meter.take_rows(),
        totals=meter.totals if meter.run_id is not None else None,
    )
    recorder.ended = True
