"""Opening many new threads' turns in one trip to the database, each with its run's setup: open_turn and prepare_run
for a batch of new threads that start from one message (no history, attachments, model pick or tools turned off),
as a claim of scheduled firings opens them (schedules/firing.py).

What one turn reads once per turn is read here once per batch (the settings stamp, the budgets) or once per person
and agent (the agent check, the person's groups, the toolset, the model configuration); the rows are written by one
INSERT per table (chat/store/new_turns.py). A new thread's history is its system prompt and the message: built, not
read back. Whatever the batch cannot open as cheaply (a person with a daily budget, whom check_budget locks and
counts; an agent they may not pick; a message sent before) is left out, for the caller to open one by one with
open_turn, which refuses or replays it as it always did."""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group

from agents.services import (
    agent_for_new_thread,
    agent_spec,
    model_choice,
    pick_many_by_slug,
    restrict_toolset,
    step_limit,
    system_prompt,
    with_sampling,
)
from languages.models import LanguageChoice
from modelconfig.services import config_for
from providers.types import ChatMessage
from tools.groups import NotPermitted
from tools.services import settings_stamp, toolset_for_stamp

from ..store.new_turns import NewTurn, replayed_ids, start_new_turns
from ..store.turns import TurnStart
from ..usage import budget_for
from .execute import RunSetup, run_options, tool_context_factory


@dataclass(frozen=True)
class Asked:
    """A turn to open: `user` (read active just now) sends `content` to a new thread of the agent `agent` (a slug;
    "" for the default agent)."""

    user: Any
    agent: str
    content: str
    client_msg_id: uuid.UUID


def open_new_turns(asked: list[Asked], *, source: str, taken_by: str = "") -> dict[int, tuple[TurnStart, RunSetup]]:
    """The turns of `asked` opened, by their index, each with its run's setup; those left out are for open_turn.
    `taken_by`: the inbox address the runs are taken with (placement().inbox_address()), "" for none. Call it inside
    no transaction of the caller's: the writes are one transaction of their own."""
    stamp = settings_stamp()
    # Each person's agent of each slug, for all of them in one statement (agent_for_new_thread one by one).
    agents: dict[tuple[int, str], Any] = pick_many_by_slug({(one.user.pk, one.agent) for one in asked if one.agent})
    without = [one.user for one in asked if not one.agent]
    if without:  # the default agent, the same for everyone
        default = agent_for_new_thread(without[0], "")
        agents.update({(user.pk, ""): default for user in without})
    groups = groups_of_people([one.user.pk for one in asked])
    batch: list[tuple[int, NewTurn]] = []
    for index, one in enumerate(asked):
        user = one.user
        if not user.is_active or budget_for(user.pk, stamp) is not None:
            continue  # open_turn refuses the one, and locks and counts the other's budget
        agent = agents[(user.pk, one.agent)]
        if agent is None and one.agent:
            continue  # not one they may pick: open_turn says so (UnknownAgent)
        spec = _spec(agent, stamp)
        person = groups.get(user.pk, frozenset())
        if spec is not None and not spec.may_use(user.pk, person):
            continue  # an agent their groups do not allow (docs/teams.md, Groups): open_turn says so
        try:
            _, info = config_for(model_choice("", spec), stamp=stamp, groups=person)
        except NotPermitted:
            continue  # a model their groups do not allow: open_turn refuses it, as prepare_run would
        batch.append((index, NewTurn(user, one.content, one.client_msg_id, agent, step_limit(spec), info["label"])))
    replayed = replayed_ids([turn for _, turn in batch])
    batch = [(index, turn) for index, turn in batch if turn.client_msg_id not in replayed]
    if not batch:
        return {}
    turns = start_new_turns([turn for _, turn in batch], source=source, taken_by=taken_by)
    # {date} is today for the whole batch: each prompt is filled once per agent and person.
    prompts: dict[tuple[int | None, str], str] = {}
    opened = {}
    for (index, _), turn in zip(batch, turns, strict=True):
        person = groups.get(turn.thread.owner_id, frozenset())
        agent = turn.thread.agent_spec
        key = (agent.id if agent is not None else None, turn.thread.owner.get_username())
        if key not in prompts:
            prompts[key] = system_prompt(agent, username=key[1])
        opened[index] = (turn, new_thread_setup(turn, asked[index].content, person, stamp, prompts[key]))
    return _with_demo_languages(opened)


def _with_demo_languages(opened: dict[int, tuple[TurnStart, RunSetup]]) -> dict[int, tuple[TurnStart, RunSetup]]:
    """The demo model's runs given the language its script speaks, as prepare_run reads it (RunSetup.language): their
    owners' choices in one statement, none read when no run is the demo's."""
    demo = [index for index, (_, setup) in opened.items() if setup.config.resolved_api == "demo"]
    if not demo:
        return opened
    chosen = LanguageChoice.of_many(opened[index][0].thread.owner_id for index in demo)
    for index in demo:
        turn, setup = opened[index]
        language = chosen.get(turn.thread.owner_id) or settings.LANGUAGE_CODE
        opened[index] = (turn, dataclasses.replace(setup, language=language))
    return opened


def _spec(agent, stamp):
    return agent_spec(agent.pk, stamp=stamp) if agent is not None else None


def groups_of_people(user_ids: list[int]) -> dict[int, frozenset[str]]:
    """Each person's group names, for all of them in one statement."""
    found: dict[int, set[str]] = {}
    rows = Group.objects.filter(user__in=set(user_ids)).values_list("user", "name")
    for user_id, name in rows:
        found.setdefault(user_id, set()).add(name)
    return {user_id: frozenset(names) for user_id, names in found.items()}


def new_thread_setup(
    turn: TurnStart, content: str, groups: frozenset[str], stamp: str | None, prompt: str | None = None
) -> RunSetup:
    """What prepare_run reads for the run of a thread just opened with one message (`content`), without reading it:
    no tool is granted yet, none turned off, and the history is the system prompt and that message. The first answer
    is the one start_new_turns reserved (order 2). `prompt`: the system prompt, filled already."""
    thread = turn.thread
    owner = thread.owner
    agent = thread.agent_spec
    config, model = config_for(model_choice(thread.model_choice, agent), stamp=stamp)
    config = with_sampling(config, agent)
    toolset = restrict_toolset(toolset_for_stamp(user=owner, groups=groups, stamp=stamp), agent)
    options = run_options(thread, agent)
    if prompt is None:
        prompt = system_prompt(agent, username=owner.get_username())
    history = [ChatMessage(role="system", content=prompt)] if prompt else []
    orders: list[int | None] = [None] * len(history)
    history.append(ChatMessage(role="user", content=content, tool_calls=[]))
    orders.append(1)
    return RunSetup(
        config,
        toolset,
        tool_context_factory(owner, thread.pk, groups, attachments=()),
        set(),
        history,
        2,
        turn.answer_message_id,
        model,
        agent,
        options,
        orders if options.context is not None else [],
        frozenset(),
        follows_a_failure=False,
    )
