"""Opening many new threads' turns together: what start_turn writes for a new thread without history, attachments or
tools turned off (its thread, its run, the user's message), and the run's first answer that prepare_run would insert,
in one INSERT each, whatever their number. A claim of scheduled firings opens up to fifty at one moment
(schedules/firing.py); one by one that was some fifteen statements a firing, built by the ORM on a busy process
(docs/performance.md P36)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from agents.services import AgentSpec

from ..models import Message, Run, Thread
from .turns import TurnStart, make_title, sent_view


@dataclass(frozen=True)
class NewTurn:
    """A turn that opens a new thread, checked already by the caller: its person is signed in and may start a run now
    (the budget), `agent` is one they may pick (agents.services.agent_for_new_thread) and `client_msg_id` opened no
    turn before (replayed_ids)."""

    user: Any
    content: str
    client_msg_id: uuid.UUID
    agent: Any  # agents.models.Agent, or None
    step_limit: int
    model_label: str


def replayed_ids(turns: list[NewTurn]) -> set[uuid.UUID]:
    """The client_msg_ids among `turns` that opened a turn already, each in a thread of the same person (the check
    start_turn makes for one new thread): one statement."""
    owners = {turn.client_msg_id: turn.user.pk for turn in turns}
    found = Message.all_versions.filter(client_msg_id__in=list(owners)).values_list("client_msg_id", "thread__owner_id")
    return {msg_id for msg_id, owner_id in found if owners.get(msg_id) == owner_id}


def start_new_turns(turns: list[NewTurn], *, source: str, taken_by: str = "") -> list[TurnStart]:
    """Each turn's new thread, its run (taken by the process at `taken_by`, as chat/store/run_claims.py take does,
    when given) and its user message, and the run's first answer, reserved as prepare_run reserves it
    (TurnStart.answer_message_id): four INSERTs in one transaction, which all fail or all hold."""
    now = timezone.now()
    with transaction.atomic():
        threads = Thread.objects.bulk_create(
            Thread(owner=turn.user, title=make_title(turn.content), agent=turn.agent, disabled_tools=[], source=source)
            for turn in turns
        )
        runs = Run.objects.bulk_create(
            Run(
                thread=thread,
                model_label=turn.model_label,
                step_limit=turn.step_limit,
                source=source,
                owner=taken_by,
                heartbeat_at=now if taken_by else None,
            )
            for thread, turn in zip(threads, turns, strict=True)
        )
        asked = Message.objects.bulk_create(
            Message(
                thread=thread,
                run=run,
                order=1,
                role=Message.Role.USER,
                content=turn.content,
                client_msg_id=turn.client_msg_id,
            )
            for thread, run, turn in zip(threads, runs, turns, strict=True)
        )
        answers = Message.objects.bulk_create(
            Message(
                thread=thread,
                run=run,
                order=2,
                role=Message.Role.ASSISTANT,
                status=Message.Status.STREAMING,
                parent_id=message.pk,
            )
            for thread, run, message in zip(threads, runs, asked, strict=True)
        )
    started = []
    for thread, run, message, answer, turn in zip(threads, runs, asked, answers, turns, strict=True):
        thread.owner = turn.user
        thread.agent_spec = AgentSpec.of(turn.agent) if turn.agent is not None else None
        started.append(
            TurnStart(
                thread=thread,
                run=run,
                created_thread=True,
                user_message=sent_view(message),
                answer_message_id=answer.pk,
            )
        )
    return started
