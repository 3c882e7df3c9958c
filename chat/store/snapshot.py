"""Reading a thread back: the history the model is sent, and the snapshot (with its views of calls, decisions and
the run) a page is sent."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import (
    BooleanField,
    ExpressionWrapper,
    Prefetch,
    Q,
)

from attachments.services import context_text, image_base64, rows_by_id, tool_attachment
from providers.secrets import without_url_credentials
from providers.types import ChatMessage, ImagePart, ToolCallRequest

from ..live.events import INTERRUPTED_RESULT, thread_snapshot
from ..live.views import (
    DecisionView,
    MessageView,
    ModelView,
    PageView,
    RunView,
    SnapshotView,
    SummaryView,
    ToolCallView,
)
from ..models import Message, Run, Thread, ToolCall, ToolCallDecision
from ..queries import history_start
from .pages import cursor_order, page_bounds

# --- reading -----------------------------------------------------------------------------


def _messages_with_calls(thread_id: uuid.UUID):
    return Message.objects.filter(thread_id=thread_id).prefetch_related(
        Prefetch("tool_calls", queryset=ToolCall.objects.order_by("index").select_related("decision__user"))
    )


def load_history(*, thread_id: uuid.UUID, system_prompt: str) -> list[ChatMessage]:
    """The conversation as the model sees it. A call without a stored result gets one saying so."""
    return history_and_last_order(thread_id=thread_id, system_prompt=system_prompt)[0]


def history_and_last_order(
    *,
    thread_id: uuid.UUID,
    system_prompt: str,
    summary: str = "",
    summary_through: int | None = None,
    orders: list[int | None] | None = None,
    tool_attachments: list | None = None,
    last_message: list | None = None,
    newest_chars: int | None = None,
) -> tuple[list[ChatMessage], int]:
    """load_history, and the order of the thread's last message (0 for none): one statement, the messages joined
    with their calls (a row per call, one for a message without any); one more when a user message has attachments
    (their text goes into its content, capped; its images into `images`).

    `summary`: the thread's summary of its messages up to order `summary_through` (chat/summaries.py): sent as a
    system note after the system prompt, in their place. `orders`: filled with each history message's order (None
    for the system prompt, the summary and the results made up for calls without one). `tool_attachments`, when
    given, is filled with the attachments of the thread's last user message, as tools receive them
    (InjectedAttachments). `last_message`, when given, is filled with the id, role, status and whether it has tool
    calls of the thread's last message (nothing for none): a run's first answer to a user message names it as its
    parent (chat/store/versions.py); a retry's first answer that fails too is not kept after a failed one.

    An answer with no text and no calls that is still streaming is left out: the message a regenerate inserted for
    the run's first answer (chat/store/versions.py), which the run fills.

    `newest_chars` (without a summary): only the newest messages are read, from the newest user message from which
    their text passes that many characters (chat/queries.py history_start, in the same statement). A run gives four
    times the model's context window in tokens: more than the context budget keeps (providers/budget.py counts at
    least a token per four characters), so the budget sends the model what it would send of the whole history, and
    a long chat's turn does not read all of it. A thread whose messages hold fewer characters is read whole."""
    history = [ChatMessage(role="system", content=system_prompt)] if system_prompt else []
    if summary and summary_through is not None:
        history.append(summary_message(summary))
    else:
        summary_through = None
    if orders is not None:
        orders.extend([None] * len(history))
    queryset = Message.objects.filter(thread_id=thread_id)
    if summary_through is not None:
        queryset = queryset.filter(order__gt=summary_through)
    elif newest_chars is not None:
        queryset = queryset.filter(order__gte=history_start(thread_id, newest_chars))
    rows = queryset.order_by("order", "tool_calls__index").values_list(
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
        "attachments",
    )
    messages: list[tuple[tuple, list[tuple[str, str, Any, str]]]] = []
    attached: dict[int, list[str]] = {}
    for pk, order, role, status, content, answers, name, call_id, call_name, args, call_status, files in rows:
        if not messages or messages[-1][0][0] != pk:
            messages.append(((pk, order, role, status, content, answers, name), []))
            if files:
                attached[pk] = [item["id"] for item in files]
        if call_id is not None:
            messages[-1][1].append((call_id, call_name, args, call_status))
    answered = {head[5] for head, _ in messages if head[2] == Message.Role.TOOL}
    found = rows_by_id([i for ids in attached.values() for i in ids]) if attached else {}
    if last_message is not None and messages:
        (pk, _, role, status, *_), calls = messages[-1]
        last_message[:] = [pk, role, status, bool(calls)]
    if tool_attachments is not None:
        last_user = next((head[0] for head, _ in reversed(messages) if head[2] == Message.Role.USER), None)
        tool_attachments[:] = [tool_attachment(found[i]) for i in attached.get(last_user, ()) if i in found]
    for at, ((pk, order, role, status, content, answers, name), calls) in enumerate(messages):
        if role == Message.Role.ASSISTANT and status == Message.Status.ERROR and not calls:
            continue  # the partial text of a failed answer: a retry answers afresh
        stopped = role == Message.Role.ASSISTANT and status == Message.Status.CANCELLED and not calls
        if stopped and retried(messages, at):
            continue  # the partial text of a stopped answer that a retry replaces (or is about to)
        if role == Message.Role.ASSISTANT and status == Message.Status.STREAMING and not content and not calls:
            continue  # an answer that has not begun: the one this run is about to write
        if orders is not None:
            orders.extend([None] * (len(history) - len(orders)))
            orders.append(order)
        if pk in attached:
            history.append(user_message_with(content, [found[i] for i in attached[pk] if i in found]))
            continue
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
    if orders is not None:
        orders.extend([None] * (len(history) - len(orders)))
    last = max((head[1] for head, _ in messages), default=0)
    return history, max(last, summary_through or 0)


def retried(messages: list, at: int) -> bool:
    """Whether the answer at `at` is one a retry answers again: nothing the person said came after it (the thread
    ends with it, or the retry's answer follows). A stopped answer the person then replied to stays in the
    history: they saw it, and may speak of it."""
    return at + 1 == len(messages) or messages[at + 1][0][2] == Message.Role.ASSISTANT


#: How the summary of older turns is introduced to the model (a system message after the system prompt).
SUMMARY_PREFIX = "Summary of the earlier part of this conversation (its messages are not repeated here):\n\n"


def summary_message(text: str) -> ChatMessage:
    return ChatMessage(role="system", content=SUMMARY_PREFIX + text)


def user_message_with(content: str, rows: list) -> ChatMessage:
    """A user message with its attachments as the model reads them: text files' and PDFs' text after the message's
    (capped, saying so), images as the message's images."""
    texts = [context_text(row) for row in rows if row.text is not None]
    images = [ImagePart(row.content_type, image_base64(row), row.name) for row in rows if row.kind == "image"]
    return ChatMessage(role="user", content="\n\n".join([content, *texts]), images=images)


def stored_call(call_id: str, name: str, args: Any) -> ToolCallRequest:
    """A call read back from its row: arguments stored as a string are the model's own text of a call that
    could not be read (chat/recorder.py): a text protocol sends it back as written, a native API with `{}` and
    the text in the call's result (providers/unreadable_calls.py)."""
    if isinstance(args, str):
        return ToolCallRequest(call_id, name, {}, raw=args)
    return ToolCallRequest(call_id, name, args or {})


def tool_call_view(call: ToolCall, *, has_artifact: bool = False, decided: bool = True) -> ToolCallView:
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
        "images": call.images,
        "duration_ms": call.duration_ms,
        "allow": call.approval if call.status == ToolCall.Status.AWAITING_APPROVAL else None,
        "original_args": call.original_args,
        "decision": decision_view(call) if decided else None,
    }


def decision_view(call: ToolCall) -> DecisionView | None:
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


def run_view(run: Run | None) -> RunView | None:
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
        "usage": run.usage,
    }


def build_snapshot(*, thread: Thread, seq: int, model: ModelView, page: int | None = None) -> SnapshotView:
    """The thread's snapshot as of `seq`: every message of the branch shown, or with `page` (a subscribe's `paged`)
    the newest `page` or so (whole turns: chat/store/pages.py) and `earlier`, the cursor of the page before them."""
    bounds = page_bounds(thread.pk, below=None, limit=page) if page is not None else None
    messages, summary_before = message_views(thread, from_order=bounds.start if bounds else None)
    if thread.summary and bounds is not None and bounds.earlier:
        summary_before = first_shown_after(thread.pk, thread.summary_through or 0)  # perhaps in an earlier page
    run = run_view(thread.runs.order_by("-started_at", "-id").first())
    from .turns import thread_agent_info

    type_, fields = thread_snapshot(
        thread.title, model, messages, run, thread_agent_info(thread), thread.disabled_tools or []
    )
    snapshot: SnapshotView = {"type": type_, "thread": str(thread.pk), "seq": seq, **fields}
    if thread.summary:  # only then: a snapshot without one is as it always was
        snapshot["summary"] = summary_view(thread.summary, summary_before)
    if bounds is not None:
        snapshot["earlier"] = messages[0]["id"] if bounds.earlier and messages else None
    return snapshot


def earlier_page(thread: Thread, *, before: object, limit: int) -> PageView:
    """The page of the thread's shown messages before message `before` (a cursor: BadCursor when it is not one),
    as a snapshot shows them, and the cursor of the page before it (None: it starts at the thread's first)."""
    bounds = page_bounds(thread.pk, below=cursor_order(thread.pk, before), limit=limit)
    messages, _ = message_views(thread, from_order=bounds.start, below_order=bounds.below)
    earlier = messages[0]["id"] if bounds.earlier and messages else None
    return {"thread": str(thread.pk), "messages": messages, "earlier": earlier}


def message_views(
    thread: Thread, *, from_order: int | None = None, below_order: int | None = None
) -> tuple[list[MessageView], int | None]:
    """The shown messages of the thread (from order `from_order` on, and before `below_order`, when given) as a
    snapshot shows them, and the id of the first of them after the thread's summary (None: none). A message with
    versions carries `versions` (chat/store/versions.py), read only for a thread that has some."""
    messages: list[MessageView] = []
    shown: list[Message] = []
    summary_before: int | None = None  # the first message after the thread's summary
    with_artifact = _answers_with_artifact(thread.pk, from_order, below_order)
    rows = _messages_with_calls(thread.pk).exclude(role__in=[Message.Role.TOOL, Message.Role.SYSTEM])
    if from_order is not None:
        rows = rows.filter(order__gte=from_order)
    if below_order is not None:
        rows = rows.filter(order__lt=below_order)
    for message in rows:
        view: MessageView = {
            "id": message.pk,
            "role": message.role,
            "content": message.content,
            "status": message.status,
        }
        if summary_before is None and thread.summary_through is not None and message.order > thread.summary_through:
            summary_before = message.pk
        if message.attachments:
            view["attachments"] = message.attachments
        if message.role == Message.Role.ASSISTANT:
            view["finish_reason"] = message.finish_reason or None
            view["reasoning"] = message.reasoning or None
            view["usage"] = message.usage
            if message.structured is not None:
                view["structured"] = message.structured
            view["tool_calls"] = [
                tool_call_view(call, has_artifact=with_artifact(message.order, call.call_id))
                for call in message.tool_calls.all()
            ]
        messages.append(view)
        shown.append(message)
    if thread.has_versions:
        from .versions import versions_of

        found = versions_of(thread.pk, shown)
        for view in messages:
            if view["id"] in found:
                view["versions"] = found[view["id"]]
    return messages, summary_before


def first_shown_after(thread_id: uuid.UUID, order: int) -> int | None:
    """The id of the thread's first shown user or assistant message after `order`: where its summary's note goes."""
    after = Message.objects.filter(thread_id=thread_id, order__gt=order).exclude(
        role__in=[Message.Role.TOOL, Message.Role.SYSTEM]
    )
    return after.order_by("order").values_list("pk", flat=True).first()


def summary_view(text: str, before: int | None) -> SummaryView:
    """The thread's summary as a page shows it: a note before message `before` (None: after the last one)."""
    return {"text": text, "before": before}


def _answers_with_artifact(thread_id: uuid.UUID, from_order: int | None = None, below_order: int | None = None):
    """Whether the tool message answering a call (the first after its step with its call id) holds an
    artifact, as chat/thread_views.py finds it. Read at the first call asked about: a thread without tool calls
    (a new chat, a plain conversation) is snapshotted without the statement. Only the tool messages between
    `from_order` and `below_order` (a page's: its calls' results come before the next page's first message)."""
    answers: dict[str, list[tuple[int, bool]]] | None = None

    def read() -> dict[str, list[tuple[int, bool]]]:
        found: dict[str, list[tuple[int, bool]]] = {}
        tools = Message.objects.filter(thread_id=thread_id, role=Message.Role.TOOL)
        if from_order is not None:
            tools = tools.filter(order__gt=from_order)
        if below_order is not None:
            tools = tools.filter(order__lt=below_order)
        rows = (
            tools.order_by("order")
            # Whether there is one, not the artifact itself (up to 1 MiB each).
            .annotate(stored=ExpressionWrapper(Q(artifact__isnull=False), output_field=BooleanField()))
            .values_list("order", "tool_call_id", "stored")
        )
        for order, call_id, stored in rows:
            found.setdefault(call_id, []).append((order, stored))
        return found

    def has_artifact(step_order: int, call_id: str) -> bool:
        nonlocal answers
        if answers is None:
            answers = read()
        return next((found for order, found in answers.get(call_id, ()) if order > step_order), False)

    return has_artifact
