"""A person's decisions on calls that wait for one, the tools granted for a thread, and the waiting run they
resume or a Stop cancels."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

import audit

from ..access import NotFound
from ..models import Message, Run, ThreadToolGrant, ToolCall, ToolCallDecision
from .steps import add_tool_results, finish_run


class AlreadyDecided(Exception):
    """The call is no longer waiting for a decision: decided before, cancelled, or never waited."""


class DecisionNotOffered(Exception):
    """The person chose something this call does not offer."""


@dataclass(frozen=True)
class Decided:
    tool_call: ToolCall
    thread_id: uuid.UUID
    run_id: int
    # What the model will be told for a call that does not run (reject / respond), else None.
    result: str | None
    # The call's status once decided that way: rejected / replied (None: it runs).
    status: str | None
    all_decided: bool


def get_tool_call_for_user(user, tool_call_id: object) -> ToolCall:
    from ..access import parse_uuid

    try:
        return ToolCall.objects.select_related("message__thread").get(
            pk=parse_uuid(tool_call_id), message__thread__owner=user, message__thread__owner__is_active=True
        )
    except ToolCall.DoesNotExist:
        raise NotFound from None


def decide_tool_call(
    *,
    user,
    tool_call_id: object,
    decision: str,
    args: dict | None = None,
    message: str = "",
    for_thread: bool = False,
    ip: str | None = None,
    via: str = "chat",
) -> Decided:
    """Record one person's decision on a waiting call. Exactly once: a second decision raises AlreadyDecided. The
    audit log gets it in the same transaction (who, which decision, the tool's name and the thread; never the
    arguments or the person's message); `ip` and `via` (chat, api) say where it came from."""
    with transaction.atomic():
        call = get_tool_call_for_user(user, tool_call_id)
        if call.status != ToolCall.Status.AWAITING_APPROVAL:
            raise AlreadyDecided
        if not (call.approval or {}).get(decision):
            raise DecisionNotOffered(decision)
        original_args = call.args
        if not call.decide(decision, args=args, message=message):
            raise AlreadyDecided
        ToolCallDecision.objects.create(
            tool_call=call,
            user=user,
            decision=decision,
            message=message,
            original_args=original_args,
            edited_args=args if decision == ToolCallDecision.Decision.EDIT else None,
            for_thread=for_thread,
        )
        audit.record(
            audit.DECISIONS[decision],
            actor=user,
            target=audit.Target("chat.toolcall", str(call.pk), call.name),
            ip=ip,
            detail={
                "tool": call.name,
                "thread": str(call.message.thread_id),
                "run": call.message.run_id,
                "for_thread": for_thread,
                "via": via,
            },
        )
        if for_thread and decision in (ToolCallDecision.Decision.APPROVE, ToolCallDecision.Decision.EDIT):
            ThreadToolGrant.objects.get_or_create(
                thread_id=call.message.thread_id, tool_name=call.name, defaults={"granted_by": user}
            )
        result = None
        if call.finished_at is not None:  # rejected, or answered by the person: the model reads why
            result = call.result or call.error
            step = call.message
            add_tool_results(thread_id=step.thread_id, run_id=step.run_id, answers=[(call, result, None)])
        waiting = ToolCall.objects.filter(message_id=call.message_id, status=ToolCall.Status.AWAITING_APPROVAL)
        return Decided(
            tool_call=call,
            thread_id=call.message.thread_id,
            run_id=call.message.run_id,
            result=result,
            status=call.status if result is not None else None,
            all_decided=not waiting.exists(),
        )


def grants_groups_and_stamp(*, thread_id: uuid.UUID, user_id: int) -> tuple[set[str], frozenset[str], str | None]:
    """What a run reads besides its history, in one statement: the tools granted for the thread, the names of the
    user's groups, and the tool settings' stamp (tools.models.SettingsStamp; None when there is no row). Written out
    in SQL (chat/queries.py): on the path of every turn's first model request."""
    from ..queries import grants_groups_and_stamp

    return grants_groups_and_stamp(thread_id, user_id)


def claim_waiting_run(*, run_id: int) -> bool:
    """Move a waiting run back to running; only one caller ever wins."""
    return bool(
        # No process owns it until one takes it to resume it (chat/store/run_claims.py).
        Run.objects.filter(pk=run_id, status=Run.Status.WAITING).update(
            status=Run.Status.RUNNING, heartbeat_at=timezone.now(), owner=""
        )
    )


def approved_calls(*, run_id: int) -> list[ToolCall]:
    """The paused step's approved calls, which run when the run resumes."""
    step = Message.objects.filter(run_id=run_id, role=Message.Role.ASSISTANT).order_by("-order").values("pk")[:1]
    return list(ToolCall.objects.filter(message__in=step, status=ToolCall.Status.REQUESTED).order_by("index"))


def cancel_waiting_run(*, thread_id: uuid.UUID, running_too: bool = False) -> tuple[int, list[str]] | None:
    """Cancel the thread's waiting run, if any: its waiting calls are cancelled. Returns (run id, call ids).
    `running_too`: a running run as well that no process has claimed (`Run.owner`: chat/store/run_claims.py), which
    the caller knows no task of its own runs (see chat/runs/cancel.py); one a process claimed meanwhile is left to
    it (its inbox hears the Stop)."""
    cancellable = Q(status=Run.Status.WAITING)
    if running_too:
        cancellable |= Q(status=Run.Status.RUNNING, owner="")
    with transaction.atomic():
        run = Run.objects.filter(cancellable, thread_id=thread_id).select_for_update().first()
        if run is None:
            return None
        waiting = [
            str(pk)
            for pk in ToolCall.objects.filter(message__run=run, status=ToolCall.Status.AWAITING_APPROVAL).values_list(
                "pk", flat=True
            )
        ]
        finish_run(run_id=run.pk, status=Run.Status.CANCELLED, steps=run.steps)
        return run.pk, waiting
