"""Regenerate the last answer; edit and resend the last user message.

Both rewind the thread to its last user message: every message after it (the assistant's answers, their tool
calls and the tool results) is deleted, and a new run answers that message again. Deleting, rather than marking
the old answer superseded, keeps one history that every reader (the model's history, snapshots, exports, shared
pages) agrees on without a new column and a filter in each of them. The earlier run rows stay (their messages'
`run` becomes null), so run history and audit of decisions on still-existing calls are unaffected.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from channels.db import database_sync_to_async
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.services import step_limit as agent_step_limit

from . import live, runs, store
from .access import get_thread_for_user
from .live import events
from .models import Message, Run, Thread
from .usage import check_budget


class NothingToRewind(Exception):
    """The thread has no user message to answer again."""


@dataclass(frozen=True)
class Rewound:
    turn: store.TurnStart
    message_id: int | None  # the last user message, answered again
    content: str
    removed: list[int]  # ids of the messages that were deleted


def rewind_and_start(
    *,
    user,
    thread_id: object,
    step_limit: int | None = None,
    content: str | None = None,
    client_msg_id: uuid.UUID | None = None,
) -> Rewound:
    """Delete everything after the thread's last user message (giving it `content`, when set) and open a run.
    Refuses while a run is active. An edit replayed with the same client_msg_id changes nothing (run None)."""
    with transaction.atomic():
        thread = get_thread_for_user(user, thread_id)
        if client_msg_id is not None and thread.messages.filter(client_msg_id=client_msg_id).exists():
            return Rewound(store.TurnStart(thread, None, False), None, "", [])
        if Run.objects.filter(thread=thread, status__in=Run.ACTIVE_STATUSES).exists():
            raise store.RunActive
        last_user = thread.messages.filter(role=Message.Role.USER).order_by("-order").first()
        if last_user is None:
            raise NothingToRewind
        check_budget(thread.owner_id)
        try:
            with transaction.atomic():
                run = Run.objects.create(
                    thread=thread,
                    model_label=store.thread_model_info(thread)["label"],
                    step_limit=step_limit or agent_step_limit(store.thread_agent(thread)),
                )
        except IntegrityError:
            raise store.RunActive from None
        after = thread.messages.filter(order__gt=last_user.order)
        removed = list(after.values_list("pk", flat=True))
        after.delete()  # their tool calls and decisions go with them
        last_user.run = run
        fields = ["run", "updated_at"]
        if content is not None:
            last_user.content = content
            last_user.client_msg_id = client_msg_id
            fields += ["content", "client_msg_id"]
        last_user.save(update_fields=fields)
        Thread.objects.filter(pk=thread.pk).update(updated_at=timezone.now())
    return Rewound(store.TurnStart(thread, run, False), last_user.pk, last_user.content, removed)


async def begin_rewind(
    *, user, thread_id: str, content: str | None = None, client_msg_id: uuid.UUID | None = None
) -> store.TurnStart:
    """Rewind (see rewind_and_start), tell every tab of the thread with `thread.rewound`, then the caller
    launches the run (runs.launch_run)."""
    await runs.ensure_recovered()
    rewound = await database_sync_to_async(rewind_and_start)(
        user=user,
        thread_id=thread_id,
        content=content,
        client_msg_id=client_msg_id,
    )
    turn = rewound.turn
    if turn.run is not None:
        rewound_event = events.thread_rewound(rewound.message_id, rewound.content, rewound.removed)
        await live.publish(turn.thread.pk, [rewound_event])
    return turn
