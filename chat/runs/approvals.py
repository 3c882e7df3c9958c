"""A person's decision on a waiting call, and the run it resumes once the paused step has them all."""

from __future__ import annotations

import uuid

from channels.db import database_sync_to_async
from django.utils.translation import gettext_noop

from agents.services import agent_spec
from languages.phrases import Phrase
from tools.executor import validation_errors

from .. import live, store
from ..broadcast import tell_inbox
from ..live import events
from ..models import Run, Thread
from .execute import load_toolset
from .start import launch_run

db = database_sync_to_async


# --- decisions -------------------------------------------------------------------------------------


class NotAvailable(Exception):
    """A decision on a call of a tool the thread's agent does not have: refused, nothing written."""


class InvalidArguments(Exception):
    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


async def decide(
    *,
    user,
    tool_call_id: str,
    decision: str,
    args=None,
    message: str = "",
    for_thread=False,
    ip: str | None = None,
    via: str = "chat",
) -> bool:
    """Apply a person's decision; when it was the last one the paused step needed, resume the run. True when this
    decision resumed it (a model request follows). `ip` and `via` are for the audit log (chat/store/approvals.py)."""
    call = await db(store.get_tool_call_for_user)(user, tool_call_id)
    agent = await db(agent_spec)(call.message.thread.agent_id)
    if agent is not None and not agent.allows(call.name):
        raise NotAvailable(Phrase(gettext_noop("Tool %(name)s is not available to this agent."), name=repr(call.name)))
    if call.approval is not None and not call.approval.get(decision):
        raise store.DecisionNotOffered(decision)
    if decision == "edit":
        tool = (await db(load_toolset)(user)).registry.get(call.name)
        problems = validation_errors(tool, args) if tool else []
        if problems:
            raise InvalidArguments(problems)
    decided = await db(store.decide_tool_call)(
        user=user,
        tool_call_id=tool_call_id,
        decision=decision,
        args=args,
        message=message,
        for_thread=for_thread,
        ip=ip,
        via=via,
    )
    call = decided.tool_call
    told = [
        events.tool_call_decided(
            str(call.pk), decision, call.args, call.original_args, message or None, user.get_username()
        )
    ]
    if decided.result is not None:
        told.append(events.tool_call_completed(str(call.pk), decided.status, decided.result))
    await live.publish(decided.thread_id, told)
    await tell_inbox(
        decided.thread_id, "decided", [str(call.pk)], owner_id=user.pk, decision=decision, by=user.get_username()
    )
    if decided.all_decided:
        return await resume_run(decided.thread_id, decided.run_id)
    return False


async def resume_run(thread_id: uuid.UUID, run_id: int) -> bool:
    if not await db(store.claim_waiting_run)(run_id=run_id):
        return False  # another decision, in this process or another, resumed it first
    thread = await Thread.objects.aget(pk=thread_id)
    run = await Run.objects.aget(pk=run_id)
    approved = await db(store.approved_calls)(run_id=run_id)
    await launch_run(store.TurnStart(thread=thread, run=run, created_thread=False), resume=approved)
    return True
