"""Events about a person's list of threads, to every socket of that person (not numbered: not a thread's history).

A thread's own events go through its log (chat/live/).
"""

from __future__ import annotations

import json

from channels.layers import get_channel_layer

from .live import group_name
from .live.events import Event


def user_group_name(user_id: int) -> str:
    """Every socket of one person: their other tabs learn of threads created, renamed or deleted."""
    return f"user.{user_id}"


async def tell_user(user_id: int, event: Event, *, news_to_followers: bool = True) -> None:
    """An event about the person's list of threads (chat/live/events.py), to all their tabs (not numbered: it is
    not a thread's). `news_to_followers` False: not for the sockets that follow the thread already (they know)."""
    type_, fields = event
    text = json.dumps({"type": type_, **fields}, ensure_ascii=False)
    message = {"type": "thread.event", "text": text}
    if not news_to_followers:
        message["unless_following"] = group_name(fields["thread"])
    await get_channel_layer().group_send(user_group_name(user_id), message)
