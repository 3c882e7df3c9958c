"""Events about a person's list of threads, to every socket of that person (not numbered: not a thread's history).

A thread's own events go through its log (chat/live/).
"""

from __future__ import annotations

import json

from delivery import group_name, person_group

from . import live
from .live.events import Event


async def tell_user(user_id: int, event: Event, *, news_to_followers: bool = True) -> None:
    """An event about the person's list of threads (chat/live/events.py), to all their tabs (not numbered: it is
    not a thread's). `news_to_followers` False: not for the sockets that follow the thread already (they know)."""
    type_, fields = event
    text = json.dumps({"type": type_, **fields}, ensure_ascii=False)
    message = {"type": "thread.event", "text": text}
    if not news_to_followers:
        message["unless_following"] = group_name(fields["thread"])
    await live.delivery().tell(person_group(user_id), message)
