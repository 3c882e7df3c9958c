"""Events about a person's list of threads, to every socket of that person (not numbered: not a thread's history).

A thread's own events go through its log (chat/live/).
"""

from __future__ import annotations

import json
import logging

from delivery import group_name, person_group

from . import live
from .live import events
from .live.events import Event

log = logging.getLogger("agentweb.inbox")


async def tell_user(user_id: int, event: Event, *, news_to_followers: bool = True) -> None:
    """An event about the person's list of threads (chat/live/events.py), to all their tabs (not numbered: it is
    not a thread's). `news_to_followers` False: not for the sockets that follow the thread already (they know)."""
    type_, fields = event
    text = json.dumps({"type": type_, **fields}, ensure_ascii=False)
    message = {"type": "thread.event", "text": text}
    if not news_to_followers:
        message["unless_following"] = group_name(fields["thread"])
    await live.delivery().tell(person_group(user_id), message)


async def tell_inbox(
    thread_id, change: str, tool_calls: list[str], *, owner_id: int | None = None, decision=None, by=None
) -> None:
    """The person's approvals inbox changed: calls of `thread_id` started or stopped waiting for them, or a tool's
    request for input opened or closed (docs/background.md). Told where that happens, never per token; to every
    socket of the thread's owner that sent inbox.subscribe (the inbox page, the chat page's top bar). `owner_id` None:
    read."""
    try:
        if owner_id is None:
            owner_id = await _owner_of(thread_id)
            if owner_id is None:
                return  # the thread is gone: its owner was told thread.deleted
        event = events.inbox_changed(str(thread_id), change, [str(c) for c in tool_calls], decision=decision, by=by)
        await live.delivery().tell(person_group(owner_id), _person_message(event))
    except Exception:  # a hint to open pages (they read the inbox again on their next load): never fails its caller
        log.warning("the inbox of thread %s could not be told of %s", thread_id, change, exc_info=True)


def _person_message(event: Event) -> dict:
    """Its own channel-layer type, not `thread.event`: only sockets that sent inbox.subscribe pass it on
    (chat/consumers.py inbox_event), and the thread events' path is left as it is."""
    type_, fields = event
    return {"type": "inbox.event", "text": json.dumps({"type": type_, **fields}, ensure_ascii=False)}


async def _owner_of(thread_id) -> int | None:
    from .models import Thread

    return await Thread.objects.filter(pk=thread_id).values_list("owner_id", flat=True).afirst()
