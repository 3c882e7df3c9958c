"""Regenerate an answer, edit a user message, switch between their versions: the run layer's side of
chat/store/versions.py, which keeps every version (nothing is deleted) and shows one branch.

Each change is told to every tab of the thread with one numbered `thread.branch_changed` (the ids that leave the
view, and the messages shown from the point on, with their versions), so reload, other tabs and a reconnect with
`after_seq` agree. A regenerate or an edit also sends `thread.rewound` first, as before versions, for clients that
know only it; the run's events follow.
"""

from __future__ import annotations

import uuid

from channels.db import database_sync_to_async

from . import live, runs, store
from .live import events
from .store.versions import BranchChange, NothingToRewind, edit, regenerate, switch

__all__ = ["NothingToRewind", "begin_edit", "begin_regenerate", "begin_switch"]


async def begin_regenerate(*, user, thread_id: str) -> store.TurnStart:
    """A new version of the last answer: tell the thread, then the caller launches the run (runs.launch_run)."""
    await runs.ensure_recovered()
    change = await database_sync_to_async(regenerate)(user=user, thread_id=thread_id)
    await _publish(change)
    return change.turn


async def begin_edit(
    *, user, thread_id: str, message_id: object | None, content: str, client_msg_id: uuid.UUID
) -> store.TurnStart:
    """A new version of a user message (None: the last one); turn.run is None for a replayed edit (nothing done)."""
    await runs.ensure_recovered()
    change = await database_sync_to_async(edit)(
        user=user, thread_id=thread_id, message_id=message_id, content=content, client_msg_id=client_msg_id
    )
    if change.turn.run is not None:
        await _publish(change)
    return change.turn


async def begin_switch(*, user, thread_id: str, message_id: object, to: object) -> store.TurnStart:
    """Show another version; nothing is told when it is the one shown already."""
    change = await database_sync_to_async(switch)(user=user, thread_id=thread_id, message_id=message_id, to=to)
    if change.removed:
        await _publish(change)
    return change.turn


async def _publish(change: BranchChange) -> None:
    told = []
    if change.rewound is not None:
        told.append(events.thread_rewound(*change.rewound))
    told.append(events.thread_branch_changed(change.message, change.removed, change.shown, change.summary))
    await live.publish(change.turn.thread.pk, told)
