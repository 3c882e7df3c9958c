"""Following a thread from a program: the events a tab following it gets, in order, each once (docs/api.md).

One more client of the delivery component (the `delivery` package), as a websocket's consumer is: it gets an
address, follows the thread's group, then reads what it missed exactly as a reconnecting tab does
(`chat.runs.subscribe_texts`: the log's events after its last number, or a snapshot); what the group delivers that
the first read held already is dropped by its number."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

from chat import live, runs
from chat.models import Thread
from delivery import group_name


@dataclass(frozen=True)
class Sent:
    """One event as a tab gets it: its JSON text, its type and its number (None for the few events without one)."""

    text: str
    type: str
    seq: int | None
    event: dict

    @classmethod
    def of(cls, text: str) -> Sent:
        event = json.loads(text)
        return cls(text=text, type=event.get("type", ""), seq=event.get("seq"), event=event)


async def follow(thread: Thread, after_seq: int | None = None) -> AsyncIterator[Sent]:
    """The thread's events from after `after_seq` (None: from a snapshot) for as long as the caller reads. Closing
    the iterator (aclose, or a disconnect) lets go of the thread's group."""
    delivery = live.delivery()
    address = await delivery.new_address()
    group = group_name(thread.pk)
    # Follow first, then read: an event published in between comes both ways and is dropped the second time.
    await delivery.attach(address, group)
    try:
        sent_up_to = -1
        for text in await runs.subscribe_texts(thread, after_seq):
            sent = Sent.of(text)
            if sent.seq is not None:
                sent_up_to = max(sent_up_to, sent.seq)
            yield sent
        while True:
            message = await delivery.receive(address)
            if message.get("type") != "thread.event":
                continue
            sent = Sent.of(message["text"])
            if sent.event.get("thread") not in (None, str(thread.pk)):
                continue
            if sent.seq is not None:
                if sent.seq <= sent_up_to:
                    continue
                sent_up_to = sent.seq
            yield sent
    finally:
        await delivery.detach(address, group)
