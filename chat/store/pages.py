"""A long thread read a page at a time (issue 42): a paged snapshot carries the newest messages of the branch shown
and a cursor, and each earlier page is read before a cursor (GET /t/<id>/messages, chat/thread_views.py).

A page is whole turns: it starts at a user message (or the thread's first message), so that a page never splits
an answer (static/chat/answer.js draws a turn's assistant messages as one) across two pages. Each read goes through
the index on (thread, order) of the branch shown (the constraint `message_order_unique_in_branch`), newest first:
its cost is the page's, whatever the thread's length."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ..models import Message

#: How many messages (user and assistant; tool results ride on their calls) a paged snapshot and a page carry,
#: give or take the turn its oldest message belongs to.
PAGE_MESSAGES = 50
#: The most a client may ask for in one page.
MAX_PAGE_MESSAGES = 200
#: How far back a page reaches for the user message that starts its oldest turn; a turn longer than this (a run
#: continued many times) is split between pages rather than read whole.
LONGEST_TURN = 500


class BadCursor(Exception):
    """A `before` that is not the id of a message the thread shows: nothing is read."""


@dataclass(frozen=True)
class PageBounds:
    """The orders a page covers: from `start` (None: the thread's first message) up to `below` (None: the last);
    `earlier`: whether the thread shows messages before it."""

    start: int | None
    below: int | None
    earlier: bool


def _shown(thread_id: uuid.UUID):
    return Message.objects.filter(thread_id=thread_id).exclude(role__in=[Message.Role.TOOL, Message.Role.SYSTEM])


def cursor_order(thread_id: uuid.UUID, before: object) -> int:
    """The order of the message a cursor names: a user or assistant message of the branch the thread shows."""
    text = str(before)
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise BadCursor("before: a message id (a number).")
    order = _shown(thread_id).filter(pk=int(text)).values_list("order", flat=True).first()
    if order is None:
        raise BadCursor("before: no message with that id is shown in this chat (it may have left the view).")
    return order


def page_bounds(thread_id: uuid.UUID, *, below: int | None, limit: int) -> PageBounds:
    """The page of about `limit` messages before order `below` (None: the newest), its start moved to the start of
    its oldest turn. One indexed statement, a second only when the page holds no user message."""
    shown = _shown(thread_id)
    if below is not None:
        shown = shown.filter(order__lt=below)
    rows = list(shown.order_by("-order").values_list("order", "role")[: limit + 1])
    if len(rows) <= limit:
        return PageBounds(None, below, False)
    page = rows[:limit]
    users = [order for order, role in page if role == Message.Role.USER]
    if users:
        return PageBounds(min(users), below, True)
    # One turn longer than the page: back to its user message, within LONGEST_TURN.
    oldest = page[-1][0]
    back = list(shown.filter(order__lt=oldest).order_by("-order").values_list("order", "role")[:LONGEST_TURN])
    start = next((order for order, role in back if role == Message.Role.USER), None)
    if start is not None:
        return PageBounds(start, below, start != back[-1][0] or len(back) == LONGEST_TURN)
    if len(back) < LONGEST_TURN:  # the thread begins with this turn
        return PageBounds(None, below, False)
    return PageBounds(oldest, below, True)
