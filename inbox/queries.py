"""What waits for a person, across all their threads, whatever started them (Thread.source: the chat, the API, a
schedule, a trigger): calls waiting for a decision (their rows, chat/store/approvals.py) and tools' open requests for
input (chat.models.OpenInputRequest, written by chat/runs/interaction.py while a request is open).

A call counts while its run waits (Run.status waiting): a Stop cancels both. A request counts while its run runs: a
process that died with a request open leaves a row whose run is not running any more (the stale sweep moves it to
interrupted), and it is not shown."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.urls import reverse

from chat.models import Message, OpenInputRequest, Run, Thread, ToolCall

#: Items of each kind one page lists (newest first); the count counts them all.
MAX_ITEMS = 200


def waiting_calls(user) -> QuerySet[ToolCall]:
    return ToolCall.objects.filter(
        message__thread__owner=user,
        message__thread__owner__is_active=True,
        status=ToolCall.Status.AWAITING_APPROVAL,
        message__run__status=Run.Status.WAITING,
    )


def open_requests(user) -> QuerySet[OpenInputRequest]:
    return OpenInputRequest.objects.filter(
        thread__owner=user, thread__owner__is_active=True, run__status=Run.Status.RUNNING
    )


def count(user) -> int:
    """How many items wait for the person (the top bar's number): what waiting_calls and open_requests find, counted
    by one statement on every page. Written out rather than built by the ORM each time: building the two querysets'
    UNION cost about a millisecond of the page's CPU, more than the count itself (docs/performance.md, issue 39)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            _COUNT_SQL, [user.pk, ToolCall.Status.AWAITING_APPROVAL, Run.Status.WAITING, user.pk, Run.Status.RUNNING]
        )
        return cursor.fetchone()[0]


def _count_sql() -> str:
    call, message, run, thread = (m._meta.db_table for m in (ToolCall, Message, Run, Thread))
    request = OpenInputRequest._meta.db_table
    return f"""SELECT
        (SELECT COUNT(*) FROM {call} c JOIN {message} m ON m.id = c.message_id JOIN {thread} t ON t.id = m.thread_id
            JOIN {run} r ON r.id = m.run_id WHERE t.owner_id = %s AND c.status = %s AND r.status = %s)
      + (SELECT COUNT(*) FROM {request} o JOIN {thread} t ON t.id = o.thread_id JOIN {run} r ON r.id = o.run_id
            WHERE t.owner_id = %s AND r.status = %s)"""


_COUNT_SQL = _count_sql()


def items(user) -> list[dict[str, Any]]:
    """The person's items, newest first: each as static/inbox/inbox.js renders its card."""
    if not getattr(user, "is_authenticated", False):
        return []
    calls = waiting_calls(user).select_related("message__thread__agent").order_by("-created_at")[:MAX_ITEMS]
    requests = open_requests(user).select_related("thread__agent").order_by("-created_at")[:MAX_ITEMS]
    found = [_call_item(call) for call in calls] + [_request_item(request) for request in requests]
    found.sort(key=lambda item: item["at"], reverse=True)
    return found


def _thread(thread) -> dict[str, Any]:
    return {
        "id": str(thread.pk),
        "title": thread.title or "New chat",
        "url": reverse("chat:thread", args=[thread.pk]),
        "source": thread.source,
    }


def _agent(thread) -> dict[str, str] | None:
    agent = thread.agent
    return {"slug": agent.slug, "name": agent.name} if agent is not None else None


def _call_item(call: ToolCall) -> dict[str, Any]:
    thread = call.message.thread
    return {
        "kind": "approval",
        "tool_call": str(call.pk),
        "tool": call.name,
        "agent": _agent(thread),
        "thread": _thread(thread),
        "at": call.created_at.isoformat(),
        "args": call.args,
        "allow": call.approval,
    }


def _request_item(request: OpenInputRequest) -> dict[str, Any]:
    thread = request.thread
    return {
        "kind": "input",
        "tool_call": str(request.tool_call),
        "request": request.pk,
        "tool": request.tool_name,
        "agent": _agent(thread),
        "thread": _thread(thread),
        "at": request.created_at.isoformat(),
        "message": request.message,
        "schema": request.schema,
    }
