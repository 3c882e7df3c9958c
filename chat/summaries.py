"""A run's context strategy applied to the history it loaded (providers/context_strategy.py), and the summaries of
the `summarise` strategy: made by a model call (the strategy's model configuration, or the run's own), stored on the
thread (its row's `summary` and `summary_through`, and a ThreadSummary), recorded as usage like any model call (a
Usage row, and the run's totals), and shown in the thread as a note (event `thread.summarised`, snapshots'
`summary`).

Applied once, before the run's first model request: the turns a run adds to are its own (never summarised or cut
by the strategy); the context budget still trims every request to the window. A turn that does not summarise costs
no statement: the thread's summary comes with its row.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.db import transaction

from providers.budget import ContextBudget
from providers.config import ModelConfig, build_provider
from providers.context_strategy import (
    ContextStrategy,
    last_turns,
    needs_summary,
    summary_cut,
    summary_request,
)
from providers.types import ChatMessage, Finish, ModelError, TextDelta, ToolDefinition
from providers.types import Usage as UsageEvent

from .agent import step_usage
from .live import events
from .models import Thread, ThreadSummary
from .store.snapshot import SUMMARY_PREFIX, first_shown_after, summary_message, summary_view
from .text import storable
from .usage import Meter, add

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async

#: The longest summary kept (characters): a model that does not stop is cut here.
SUMMARY_LIMIT = 20_000
#: The summary call's own output limits (tokens), whatever limit the agent's answers have: the ~300 words it is asked
#: for, with room; then, for a summary cut at the first, twice as much. One cut at the last is not used.
SUMMARY_MAX_TOKENS = 1024
SUMMARY_LIMITS = (SUMMARY_MAX_TOKENS, 2 * SUMMARY_MAX_TOKENS)


@dataclass
class Summariser:
    """What a run needs to apply its strategy: the thread, the run's model and meter, and how to tell the thread."""

    thread: Thread
    run_id: int
    config: ModelConfig
    budget: ContextBudget | None
    meter: Meter
    emit: Any  # async (Event) -> None: the run's publish
    note: Any  # async (text) -> None: a run note
    demo_delay: float = 0.0
    transport: str = "streaming"  # how model servers are read (AGENTWEB_LLM_TRANSPORT)


async def apply_strategy(
    strategy: ContextStrategy | None,
    history: list[ChatMessage],
    orders: list[int | None],
    definitions: list[ToolDefinition],
    summariser: Summariser,
) -> list[ChatMessage]:
    """The history to run with: `history` (loaded with the thread's summary in place of what it covers, `orders`
    its messages' orders) as `strategy` cuts it."""
    if strategy is None or strategy.kind == "trim":
        return history
    if strategy.kind == "last_n":
        return last_turns(history, strategy.last_n)
    budget = summariser.budget
    if budget is None:  # no window known: no share of it to pass
        return history
    if not needs_summary(history, definitions, limit=budget.limit, share=strategy.share, protocol=budget.protocol):
        return history
    cut = summary_cut(history, strategy.keep_turns)
    if cut is None:
        return history
    through = max((o for o in orders[: cut.keep_from] if o is not None), default=None)
    if through is None:
        return history
    try:
        text = await summarise(strategy, cut.older, summariser, through)
    except ModelError as error:
        await summariser.note(f"The older messages could not be summarised ({error}); they are trimmed instead.")
        return history
    # The system prompt(s), without the summary the new one replaces.
    return [*_leading_system(history, cut.keep_from), summary_message(text), *history[cut.keep_from :]]


def _leading_system(history: list[ChatMessage], end: int) -> list[ChatMessage]:
    kept = []
    for message in history[:end]:
        if message.role != "system":
            break
        if not message.content.startswith(SUMMARY_PREFIX):
            kept.append(message)
    return kept


async def summarise(strategy: ContextStrategy, older: list[ChatMessage], summariser: Summariser, through: int) -> str:
    """Summarise `older` (with the thread's current summary) by the strategy's model, store it and tell the thread.

    The call has its own output limit (SUMMARY_MAX_TOKENS), not the agent's: an agent's answers may be held to a
    few dozen tokens. A summary cut at the limit is asked for once more with twice as much, and one cut again is not
    used (ModelError, which the caller notes); every attempt's tokens count."""
    thread = summariser.thread
    if strategy.summary_model:
        from modelconfig.services import config_for

        config, info = await db(config_for)(strategy.summary_model)
    else:
        config, info = summariser.config, None
    meter = summariser.meter
    if info is not None:  # another model than the run's: its own prices and name on the row
        model_id = info.get("id")
        meter = Meter(
            user_id=meter.user_id,
            thread_id=meter.thread_id,
            run_id=meter.run_id,
            model_config_id=int(model_id) if isinstance(model_id, str) and model_id.isdigit() else None,
            model_label=info.get("label", ""),
            agent=meter.agent,
            price_input=config.price_input,
            price_output=config.price_output,
        )
    messages = summary_request(older, thread.summary)
    shown: dict[str, Any] | None = None
    summary = ""
    tried = 0
    for limit in SUMMARY_LIMITS:
        summary, usage, cut = await _ask_for_summary(config, messages, limit, summariser)
        tried += 1
        used = meter.record(usage)
        shown = used if shown is None else add(shown, used)
        if not cut:
            break
        log.info("A summary of thread %s was cut off at its output limit (%s tokens)", thread.pk, limit)
    else:
        _keep_rows(meter, summariser.meter, shown)  # spent, if not used
        raise ModelError(f"the summary was cut off at its output limit of {SUMMARY_LIMITS[-1]} tokens, twice")
    if not summary:
        _keep_rows(meter, summariser.meter, shown)
        raise ModelError("the model answered with nothing")
    rows = meter.rows[-tried:]  # written now, with the summary
    del meter.rows[-tried:]
    if meter is not summariser.meter:
        summariser.meter.totals = add(summariser.meter.totals, shown)  # the run's totals count every call it made
    label = rows[0].model_label
    before = await db(save_summary)(
        thread_id=thread.pk,
        run_id=summariser.run_id,
        text=summary,
        through=through,
        model_label=label,
        usage=shown,
        usage_rows=rows,
    )
    thread.summary, thread.summary_through = summary, through
    await summariser.emit(events.thread_summarised({**summary_view(summary, before), "usage": shown}))
    return summary


async def _ask_for_summary(
    config: ModelConfig, messages: list[ChatMessage], limit: int, summariser: Summariser
) -> tuple[str, dict[str, Any], bool]:
    """One summary call under output limit `limit`: its text, its usage, and whether the limit cut it."""
    provider = build_provider(
        dataclasses.replace(config, max_tokens=limit), demo_delay=summariser.demo_delay, transport=summariser.transport
    )
    text: list[str] = []
    reported = None
    cut = False
    async for event in provider.stream(messages, []):
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, UsageEvent):
            reported = event
        elif isinstance(event, Finish):
            cut = event.reason == "length"
    summary = storable("".join(text).strip())[:SUMMARY_LIMIT]
    usage = step_usage(reported, messages, [], ChatMessage(role="assistant", content=summary), "")
    return summary, usage, cut


def _keep_rows(meter: Meter, run_meter: Meter, shown: dict[str, Any] | None) -> None:
    """The usage of summary calls whose summary is not used, written with the run's next write like its own calls'."""
    if meter is not run_meter:
        run_meter.rows.extend(meter.take_rows())
        if shown is not None:
            run_meter.totals = add(run_meter.totals, shown)


def save_summary(
    *, thread_id: uuid.UUID, run_id: int, text: str, through: int, model_label: str, usage: dict, usage_rows: list
) -> int | None:
    """The summary on the thread's row and as a ThreadSummary, with its call's Usage row: one transaction. Returns
    the id of the first message after it (the note is shown before it)."""
    from .models import Message, Usage

    with transaction.atomic():
        # The message it covers last: the summary holds for the branches that show it (chat/store/versions.py).
        last = Message.objects.filter(thread_id=thread_id, order=through).values_list("pk", flat=True).first()
        ThreadSummary.objects.create(
            thread_id=thread_id,
            run_id=run_id,
            text=text,
            through_order=through,
            through_message_id=last,
            model_label=model_label,
            usage=usage,
        )
        # update() leaves updated_at alone: the list orders chats by when the person last sent in them.
        Thread.objects.filter(pk=thread_id).update(summary=text, summary_through=through)
        if usage_rows:
            Usage.objects.bulk_create(usage_rows)
    return first_shown_after(thread_id, through)
