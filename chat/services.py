"""Synchronous database operations of a chat turn. Keyword-only, typed; async code calls them
through database_sync_to_async (chat/runs.py), never directly."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import (
    BooleanField,
    ExpressionWrapper,
    Max,
    Prefetch,
    Q,
)
from django.utils import timezone

from modelconfig.services import config_for
from providers.secrets import without_url_credentials
from providers.types import ChatMessage, ToolCallRequest

from .access import NotFound, get_thread_for_user
from .live.events import INTERRUPTED_RESULT
from .models import Message, Run, Thread, ThreadToolGrant, ToolCall, ToolCallDecision

TITLE_LENGTH = 60
STOPPED_SERVER_ERROR = "The server stopped during this run; the partial answer is kept."


class RunActive(Exception):
    """The thread already has a run that is running or waiting."""


class AlreadyDecided(Exception):
    """The call is no longer waiting for a decision: decided before, cancelled, or never waited."""


class DecisionNotOffered(Exception):
    """The person chose something this call does not offer."""


class NothingToFollowUp(Exception):
    """Retry or continue asked of a thread whose last run does not allow it."""


@dataclass(frozen=True)
class TurnStart:
    thread: Thread
    run: Run | None  # None when the message had already been sent (a replayed frame)
    created_thread: bool
    # A retry that asks for decisions again (the run waits, no task): (tool call id, the choices offered) per call.
    awaiting: tuple[tuple[str, dict], ...] = ()
    # The user's message that opened the run (message.send), which run.started names; None for other runs.
    user_message_id: int | None = None


def make_title(content: str) -> str:
    line = " ".join(content.split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


def start_turn(
    *,
    user,
    thread_id: str | None,
    content: str,
    client_msg_id: uuid.UUID,
    step_limit: int,
    model_label: str | None = None,
    model_choice: str | None = None,
) -> TurnStart:
    """Store the user's message and open a run. Idempotent by client_msg_id; refuses a second active run.
    `model_choice` (a checked model id) becomes the thread's model; the run is labelled with the thread's model."""
    if thread_id is not None and (not getattr(user, "is_authenticated", False) or not user.is_active):
        raise NotFound
    # One transaction: whatever fails (the one-active-run constraint refusing a simultaneous turn, a message the
    # database refuses), no thread, run or message of this turn is left, least of all a run left active. No savepoint:
    # inside a caller's transaction (chat/runs.py open_turn) a failure undoes the caller's whole transaction too.
    try:
        with transaction.atomic(savepoint=False):
            return _open_turn(
                user=user,
                thread_id=thread_id,
                content=content,
                client_msg_id=client_msg_id,
                step_limit=step_limit,
                model_label=model_label,
                model_choice=model_choice,
            )
    except IntegrityError:
        # The one-active-run constraint refused a simultaneous turn's run, or a simultaneous turn wrote its
        # message first (the message's uniqueness): this turn never happened.
        raise RunActive from None


def _open_turn(
    *,
    user,
    thread_id: str | None,
    content: str,
    client_msg_id: uuid.UUID,
    step_limit: int,
    model_label: str | None,
    model_choice: str | None,
) -> TurnStart:
    created = thread_id is None
    if created:
        earlier = Message.objects.filter(thread__owner=user, client_msg_id=client_msg_id).first()
        if earlier is not None:
            return TurnStart(thread=earlier.thread, run=None, created_thread=False)
        thread = Thread.objects.create(owner=user, title=make_title(content), model_choice=model_choice or "")
        last_order = 0
    else:
        thread = _thread_for_turn(user, thread_id, client_msg_id)
        if thread.replayed:
            return TurnStart(thread=thread, run=None, created_thread=False)
        last_order = thread.last_order or 0
    changes: dict[str, Any] = {} if created else {"updated_at": timezone.now()}
    if model_choice is not None and model_choice != thread.model_choice:
        thread.model_choice = changes["model_choice"] = model_choice
    _, info = config_for(thread.model_choice, stamp=None if created else thread.stamp)
    run = Run.objects.create(
        thread=thread, model_label=info["label"] if model_label is None else model_label, step_limit=step_limit
    )
    message = Message.objects.create(
        thread=thread,
        run=run,
        order=last_order + 1,
        role=Message.Role.USER,
        content=content,
        client_msg_id=client_msg_id,
    )
    if changes:
        Thread.objects.filter(pk=thread.pk).update(**changes)
    return TurnStart(thread=thread, run=run, created_thread=created, user_message_id=message.pk)


def _thread_for_turn(user, thread_id: object, client_msg_id: uuid.UUID) -> Thread:
    """The user's thread and what opening a turn on it reads: whether this message was stored already (a replayed
    frame), the order of its last message, and the tool settings' stamp (the thread's model configuration as this
    process found it for that stamp). An active run is not looked for: the database refuses a second one
    (one_active_run_per_thread), and start_turn says RunActive. Written out in SQL (chat/queries.py): the ORM
    spent milliseconds of CPU building it, on the path of every turn's first model request."""
    from .access import parse_uuid
    from .queries import thread_for_turn

    thread = thread_for_turn(user.pk, parse_uuid(thread_id), client_msg_id)
    if thread is None:
        raise NotFound
    thread.owner = user  # found by its owner: the run's tools are this user's
    return thread


def thread_model_info(thread: Thread | None) -> dict[str, Any]:
    """What a browser may see of the model the thread uses (the default for no thread): never the key."""
    return config_for(thread.model_choice if thread is not None else None)[1]


def set_thread_model(*, user, thread_id: object, model_choice: str) -> Thread:
    """Store the model the person picked for their thread (a checked id; see modelconfig.services.check_choice)."""
    thread = get_thread_for_user(user, thread_id)
    Thread.objects.filter(pk=thread.pk).update(model_choice=model_choice)
    thread.model_choice = model_choice
    return thread


def next_order(thread: Thread) -> int:
    return (thread.messages.aggregate(m=Max("order"))["m"] or 0) + 1


def create_assistant_message(*, thread_id: uuid.UUID, run_id: int, order: int | None = None) -> int:
    """`order`: the message's place when the caller knows it (the run, the thread's only writer while it
    streams: see RunRecorder.next_order), else read from the thread."""
    if order is None:
        order = next_order(Thread.objects.get(pk=thread_id))
    message = Message.objects.create(
        thread_id=thread_id, run_id=run_id, order=order, role=Message.Role.ASSISTANT, status=Message.Status.STREAMING
    )
    return message.pk


def discard_message(*, message_id: int) -> None:
    """A message reserved for a run's first answer that the run never started (it failed before)."""
    Message.objects.filter(pk=message_id, content="").delete()


def save_partial_content(*, message_id: int, content: str) -> None:
    Message.objects.filter(pk=message_id).update(content=content, updated_at=timezone.now())


def complete_assistant_message(
    *,
    message_id: int,
    content: str,
    status: str,
    finish_reason: str = "",
    usage: dict | None = None,
    reasoning: str = "",
) -> None:
    Message.objects.filter(pk=message_id).update(
        content=content,
        reasoning=reasoning,
        status=status,
        finish_reason=finish_reason,
        usage=usage or None,
        updated_at=timezone.now(),
    )


# What the run changes on a call it holds (chat/recorder.py), written when the call was stored before.
CALL_FIELDS = ("args", "status", "approval", "started_at", "finished_at", "duration_ms", "result", "error")


def record_tool_calls(
    *,
    message_id: int | None,
    thread_id: uuid.UUID,
    new: list[ToolCall],
    changed: list[ToolCall],
    answers: list[Message],
) -> None:
    """A step's tool calls as the run holds them, in one transaction: the calls not written before (of message
    `message_id`) in one INSERT, those written before (a snapshot, a resumed step) in one UPDATE, then the tool
    messages answering the finished ones in one INSERT. An answer without its order is placed after the thread's
    last message, read now."""
    with transaction.atomic():
        if new:
            for call in new:
                call.message_id = message_id
            ToolCall.objects.bulk_create(new)
        if changed:
            ToolCall.objects.bulk_update(changed, CALL_FIELDS)
        if answers:
            if any(answer.order is None for answer in answers):
                order = next_order(Thread(pk=thread_id)) - 1
                for answer in answers:
                    if answer.order is None:
                        order += 1
                        answer.order = order
            Message.objects.bulk_create(answers)


def finish_run(*, run_id: int, status: str, reason: str = "", error: str = "", steps: int) -> None:
    """End the run as `status`. Its events are numbered by the thread's log (chat/live/), not here."""
    # One transaction: a process that dies half-way leaves the run running, which recovery finishes again.
    with transaction.atomic():
        if status != Run.Status.COMPLETED:
            # A run that completed ended every step it began; any other may have left a message streaming and calls
            # open: they are closed, so the history stays one a model accepts.
            ToolCall.objects.filter(message__run_id=run_id, status__in=ToolCall.OPEN_STATUSES).update(
                status=ToolCall.Status.CANCELLED, error=INTERRUPTED_RESULT, finished_at=timezone.now()
            )
            Message.objects.filter(run_id=run_id, status=Message.Status.STREAMING).update(
                status=Message.Status.CANCELLED if status == Run.Status.CANCELLED else Message.Status.ERROR
            )
        Thread.objects.filter(runs=run_id).update(updated_at=timezone.now())
        Run.objects.filter(pk=run_id).update(
            status=status, reason=reason, error=error, steps=steps, finished_at=timezone.now()
        )


# --- reading -----------------------------------------------------------------------------


def _messages_with_calls(thread_id: uuid.UUID):
    return Message.objects.filter(thread_id=thread_id).prefetch_related(
        Prefetch("tool_calls", queryset=ToolCall.objects.order_by("index").select_related("decision__user"))
    )


def load_history(*, thread_id: uuid.UUID, system_prompt: str) -> list[ChatMessage]:
    """The conversation as the model sees it. A call without a stored result gets one saying so."""
    return history_and_last_order(thread_id=thread_id, system_prompt=system_prompt)[0]


def history_and_last_order(*, thread_id: uuid.UUID, system_prompt: str) -> tuple[list[ChatMessage], int]:
    """load_history, and the order of the thread's last message (0 for none): one statement, the messages joined
    with their calls (a row per call, one for a message without any)."""
    history = [ChatMessage(role="system", content=system_prompt)] if system_prompt else []
    rows = (
        Message.objects.filter(thread_id=thread_id)
        .order_by("order", "tool_calls__index")
        .values_list(
            "pk",
            "order",
            "role",
            "status",
            "content",
            "tool_call_id",
            "name",
            "tool_calls__call_id",
            "tool_calls__name",
            "tool_calls__args",
            "tool_calls__status",
        )
    )
    messages: list[tuple[tuple, list[tuple[str, str, Any, str]]]] = []
    for pk, order, role, status, content, answers, name, call_id, call_name, args, call_status in rows:
        if not messages or messages[-1][0][0] != pk:
            messages.append(((pk, order, role, status, content, answers, name), []))
        if call_id is not None:
            messages[-1][1].append((call_id, call_name, args, call_status))
    answered = {head[5] for head, _ in messages if head[2] == Message.Role.TOOL}
    for (_, _, role, status, content, answers, name), calls in messages:
        if role == Message.Role.ASSISTANT and status == Message.Status.ERROR and not calls:
            continue  # the partial text of a failed answer: a retry answers afresh
        if role == Message.Role.TOOL:
            history.append(
                ChatMessage(
                    role="tool",
                    content=content,
                    tool_call_id=answers,
                    name=name,
                    status="success" if status == Message.Status.COMPLETE else "error",
                )
            )
            continue
        requests = [stored_call(call_id, call_name, args) for call_id, call_name, args, _ in calls]
        history.append(ChatMessage(role=role, content=content, tool_calls=requests))
        # Approved calls of a paused step get their real result when the run resumes.
        pending = {call_id for call_id, _, _, call_status in calls if call_status in ToolCall.PENDING_STATUSES}
        history.extend(
            ChatMessage(role="tool", content=INTERRUPTED_RESULT, tool_call_id=c.id, name=c.name, status="error")
            for c in requests
            if c.id not in answered and c.id not in pending
        )
    return history, max((head[1] for head, _ in messages), default=0)


def stored_call(call_id: str, name: str, args: Any) -> ToolCallRequest:
    """A call read back from its row: arguments stored as a string are the model's own text of a call that
    could not be read (chat/recorder.py), sent back to the model as it wrote them."""
    if isinstance(args, str):
        return ToolCallRequest(call_id, name, {}, raw=args)
    return ToolCallRequest(call_id, name, args or {})


def tool_call_view(call: ToolCall, *, has_artifact: bool = False, decided: bool = True) -> dict[str, Any]:
    """A call as a snapshot shows it. `decided` False: without who decided what (a call a run holds in memory,
    whose decision, if any, only the database knows: reading it would be a query)."""
    return {
        "id": str(call.id),
        "call_id": call.call_id,
        "name": call.name,
        "args": call.args,
        "status": call.status,
        "content": call.result or call.error,
        "has_artifact": has_artifact,
        "duration_ms": call.duration_ms,
        "allow": call.approval if call.status == ToolCall.Status.AWAITING_APPROVAL else None,
        "original_args": call.original_args,
        "decision": decision_view(call) if decided else None,
    }


def decision_view(call: ToolCall) -> dict[str, Any] | None:
    """Who decided what about a call that waited, for a page loaded after the decision."""
    try:
        decision = call.decision
    except ToolCallDecision.DoesNotExist:
        return None
    return {
        "decision": decision.decision,
        "by": decision.user.get_username() if decision.user else "",
        "message": decision.message or None,
        "at": decision.decided_at.isoformat(),
    }


def run_view(run: Run | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "id": run.pk,
        "status": run.status,
        "reason": run.reason or None,
        # Errors of runs recorded before URL credentials were kept out of them may still hold some.
        "error": without_url_credentials(run.error) or None,
        "steps": run.steps,
        "notes": run.notes,
    }


def build_snapshot(*, thread: Thread, seq: int, model: dict[str, Any]) -> dict[str, Any]:
    messages = []
    with_artifact = _answers_with_artifact(thread.pk)
    for message in _messages_with_calls(thread.pk).exclude(role__in=[Message.Role.TOOL, Message.Role.SYSTEM]):
        view = {"id": message.pk, "role": message.role, "content": message.content, "status": message.status}
        if message.role == Message.Role.ASSISTANT:
            view["finish_reason"] = message.finish_reason or None
            view["reasoning"] = message.reasoning or None
            view["usage"] = message.usage
            view["tool_calls"] = [
                tool_call_view(call, has_artifact=with_artifact(message.order, call.call_id))
                for call in message.tool_calls.all()
            ]
        messages.append(view)
    return {
        "type": "thread.snapshot",
        "thread": str(thread.pk),
        "seq": seq,
        "title": thread.title,
        "model": model,
        "messages": messages,
        "run": run_view(thread.runs.order_by("-started_at", "-id").first()),
    }


def _answers_with_artifact(thread_id: uuid.UUID):
    """Whether the tool message answering a call (the first after its step with its call id) holds an
    artifact, as chat/thread_views.py finds it."""
    answers: dict[str, list[tuple[int, bool]]] = {}
    rows = (
        Message.objects.filter(thread_id=thread_id, role=Message.Role.TOOL)
        .order_by("order")
        # Whether there is one, not the artifact itself (up to 1 MiB each).
        .annotate(stored=ExpressionWrapper(Q(artifact__isnull=False), output_field=BooleanField()))
        .values_list("order", "tool_call_id", "stored")
    )
    for order, call_id, stored in rows:
        answers.setdefault(call_id, []).append((order, stored))

    def has_artifact(step_order: int, call_id: str) -> bool:
        return next((found for order, found in answers.get(call_id, ()) if order > step_order), False)

    return has_artifact


def list_threads(*, user) -> list[Thread]:
    return list(Thread.objects.filter(owner=user).order_by("-updated_at")[:200])


# --- approvals -------------------------------------------------------------------------


def pause_run(*, run_id: int, steps: int) -> None:
    with transaction.atomic():
        Run.objects.filter(pk=run_id).update(status=Run.Status.WAITING, steps=steps, heartbeat_at=None)
        Thread.objects.filter(runs=run_id).update(updated_at=timezone.now())


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
    from .access import parse_uuid

    try:
        return ToolCall.objects.select_related("message").get(
            pk=parse_uuid(tool_call_id), message__thread__owner=user, message__thread__owner__is_active=True
        )
    except ToolCall.DoesNotExist:
        raise NotFound from None


def decide_tool_call(
    *, user, tool_call_id: object, decision: str, args: dict | None = None, message: str = "", for_thread: bool = False
) -> Decided:
    """Record one person's decision on a waiting call. Exactly once: a second decision raises AlreadyDecided."""
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
        if for_thread and decision in (ToolCallDecision.Decision.APPROVE, ToolCallDecision.Decision.EDIT):
            ThreadToolGrant.objects.get_or_create(
                thread_id=call.message.thread_id, tool_name=call.name, defaults={"granted_by": user}
            )
        result = None
        if call.finished_at is not None:  # rejected, or answered by the person: the model reads why
            result = call.result or call.error
            replied = call.status == ToolCall.Status.REPLIED
            _store_tool_result(
                call, status=Message.Status.COMPLETE if replied else Message.Status.ERROR, content=result
            )
        waiting = ToolCall.objects.filter(message_id=call.message_id, status=ToolCall.Status.AWAITING_APPROVAL)
        return Decided(
            tool_call=call,
            thread_id=call.message.thread_id,
            run_id=call.message.run_id,
            result=result,
            status=call.status if result is not None else None,
            all_decided=not waiting.exists(),
        )


def _store_tool_result(call: ToolCall, *, status: str, content: str, artifact: Any = None) -> None:
    thread = Thread.objects.get(pk=call.message.thread_id)
    Message.objects.create(
        thread=thread,
        run_id=call.message.run_id,
        order=next_order(thread),
        role=Message.Role.TOOL,
        content=content,
        status=status,
        tool_call_id=call.call_id,
        name=call.name,
        artifact=artifact,
    )


def grants_groups_and_stamp(*, thread_id: uuid.UUID, user_id: int) -> tuple[set[str], frozenset[str], str | None]:
    """What a run reads besides its history, in one statement: the tools granted for the thread, the names of the
    user's groups, and the tool settings' stamp (tools.models.SettingsStamp; None when there is no row). Written out
    in SQL (chat/queries.py): on the path of every turn's first model request."""
    from .queries import grants_groups_and_stamp

    return grants_groups_and_stamp(thread_id, user_id)


def claim_waiting_run(*, run_id: int) -> bool:
    """Move a waiting run back to running; only one caller ever wins."""
    return bool(
        # No process owns it until one takes it to resume it (chat/run_owners.py).
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
    `running_too`: a running run as well, which the caller knows no task runs (see chat/runs.py cancel)."""
    statuses = Run.ACTIVE_STATUSES if running_too else (Run.Status.WAITING,)
    with transaction.atomic():
        run = Run.objects.filter(thread_id=thread_id, status__in=statuses).first()
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


# --- runs that follow a run: retry and continue ----------------------------------------


def start_followup_run(
    *, user, thread_id: object, kind: str, step_limit: int, model_label: str | None = None
) -> TurnStart:
    """A new run on the thread's history without a new message: `retry` after a run that failed, was
    interrupted or cancelled; `continue` after one that stopped at its step limit."""
    with transaction.atomic():
        thread = get_thread_for_user(user, thread_id)
        last = thread.runs.order_by("-started_at", "-id").first()
        if last is None:
            raise NothingToFollowUp
        if last.is_active():
            raise RunActive
        if not (last.can_retry() if kind == "retry" else last.can_continue()):
            raise NothingToFollowUp
        if model_label is None:
            model_label = thread_model_info(thread)["label"]
        unasked = _stopped_at_approval(last) if last.status == Run.Status.CANCELLED else []
        try:
            with transaction.atomic():
                run = Run.objects.create(
                    thread=thread,
                    model_label=model_label,
                    step_limit=step_limit,
                    status=Run.Status.WAITING if unasked else Run.Status.RUNNING,
                )
        except IntegrityError:
            raise RunActive from None
        if unasked:
            _ask_again(unasked, run)
    return TurnStart(
        thread=thread, run=run, created_thread=False, awaiting=tuple((str(c.pk), c.approval) for c in unasked)
    )


def _stopped_at_approval(run: Run) -> list[ToolCall]:
    """The calls a Stop cancelled while they waited for a person's decision (none was made): a retry asks again
    rather than telling the model they were cancelled."""
    return list(
        ToolCall.objects.filter(
            message__run=run, status=ToolCall.Status.CANCELLED, approval__isnull=False, decision__isnull=True
        ).order_by("index")
    )


def _ask_again(calls: list[ToolCall], run: Run) -> None:
    """The calls wait again, as the new (waiting) run's step: a decision resumes `run` (see approved_calls). Calls of
    that step a person had approved before the Stop go back to requested, so they run when it resumes."""
    message_id = calls[0].message_id
    Message.objects.filter(pk=message_id).update(run=run)
    ToolCall.objects.filter(pk__in=[c.pk for c in calls]).update(
        status=ToolCall.Status.AWAITING_APPROVAL, error="", finished_at=None
    )
    ToolCall.objects.filter(
        message_id=message_id,
        status=ToolCall.Status.CANCELLED,
        decision__decision__in=[ToolCallDecision.Decision.APPROVE, ToolCallDecision.Decision.EDIT],
    ).update(status=ToolCall.Status.REQUESTED, error="", finished_at=None)


# --- runs whose process died ----------------------------------------------------------------


def heartbeat(*, run_id: int) -> None:
    Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(heartbeat_at=timezone.now())


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


def search_messages(*, user, query: str, limit: int) -> list[dict[str, Any]]:
    """The user's own user and assistant messages containing `query`, newest first."""
    found = (
        Message.objects.filter(
            thread__owner=user, role__in=[Message.Role.USER, Message.Role.ASSISTANT], content__icontains=query
        )
        .select_related("thread")
        .order_by("-created_at")[: max(1, min(limit, 50))]
    )
    return [
        {
            "thread": str(m.thread_id),
            "thread_title": m.thread.title,
            "role": m.role,
            "content": m.content,
            "created_at": m.created_at.isoformat(),
        }
        for m in found
    ]


def add_run_note(*, run_id: int, text: str) -> None:
    run = Run.objects.get(pk=run_id)
    run.notes = [*run.notes, text]
    run.save(update_fields=["notes"])
