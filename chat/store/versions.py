"""Versions of a thread's messages: regenerate an answer, edit any user message, switch between the versions.

A thread's messages form a tree; the branch it shows is its `active` messages (Message.objects sees only them, so
every reader agrees on it). Regenerating the last answer or editing a user message never deletes: it hides the
branch from that point on (inactive, `hidden_under` the version that was shown there) and starts a new version
beside it, which a run answers. Switching to another version hides the shown one's branch the same way and shows
the other's again, exactly as it was when it was left: its later messages, and the versions picked below it.

The versions of a point are the messages with the same parent and role (Message.parent says where that is set).
Orders stay contiguous along a branch: a new version takes the order of the one it stands beside.
Synchronous: async code calls these through database_sync_to_async (chat/rewind.py).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from agents.services import step_limit as agent_step_limit

from ..access import NotFound, get_thread_for_user
from ..live.views import MessageView, SummaryView, VersionsView
from ..models import Message, Run, Thread, ThreadSummary
from ..usage import check_budget
from .turns import RunActive, TurnStart, check_may_run, thread_agent, thread_model_info


class NothingToRewind(Exception):
    """The thread has no user message to answer again."""


@dataclass(frozen=True)
class BranchChange:
    """What a regenerate, an edit or a switch changed: the thread, the run that answers the new version (None for a
    switch, or a replayed edit), the version now shown at the point, the ids that left the view (in order), and the
    point's order (the view is the thread's shown messages before it, then the new branch from it)."""

    turn: TurnStart
    message: int | None
    order: int
    removed: list[int] = field(default_factory=list)
    # For thread.rewound (the event from before versions, still sent for a regenerate or an edit): the user message
    # answered again as a client shows it, its text, and the ids after it that left the view.
    rewound: tuple[int, str, list[int]] | None = None
    # What the view shows from the point on (as a snapshot shows messages) and the thread's summary as a snapshot
    # has it (None: none), read in the change's transaction: the event tells this change, whatever follows it.
    shown: list[MessageView] = field(default_factory=list)
    summary: SummaryView | None = None


# --- regenerate, edit -----------------------------------------------------------------------


def regenerate(*, user, thread_id: object) -> BranchChange:
    """A new version of the answer to the thread's last user message: the answer shown (with everything after it)
    is hidden, and a new answer, inserted here so that the view can show it as the next version, is the run's."""
    with transaction.atomic():
        thread = get_thread_for_user(user, thread_id)
        _refuse_while_running(thread)
        asked = thread.messages.filter(role=Message.Role.USER).order_by("-order").first()
        if asked is None:
            raise NothingToRewind
        run = _open_run(thread)
        answered = thread.messages.filter(order=asked.order + 1).first()
        removed = []
        if answered is not None:
            if answered.parent_id != asked.pk:  # written before it said so: still one of this message's answers
                Message.all_versions.filter(pk=answered.pk).update(parent=asked)
            removed = _hide_from(thread, asked.order + 1, under=answered.pk)
        answer = Message.objects.create(
            thread=thread,
            run=run,
            order=asked.order + 1,
            role=Message.Role.ASSISTANT,
            status=Message.Status.STREAMING,
            parent=asked,
        )
        Message.objects.filter(pk=asked.pk).update(run=run)
        _changed(thread, versions=answered is not None, sent=True)
        turn = TurnStart(thread, run, False, answer_message_id=answer.pk)
        rewound = (asked.pk, asked.content, removed)
        return BranchChange(turn, answer.pk, answer.order, removed, rewound, *_view(thread, answer.order))


def edit(*, user, thread_id: object, message_id: object | None, content: str, client_msg_id: uuid.UUID) -> BranchChange:
    """A new version of a user message of the branch shown (`message_id`; None: the last one) with `content`: it and
    everything after it are hidden, the new version takes its place and a run answers it. Replayed with the same
    client_msg_id it changes nothing (turn.run None). The new version carries the edited one's attachments."""
    with transaction.atomic():
        thread = get_thread_for_user(user, thread_id)
        if Message.all_versions.filter(thread=thread, client_msg_id=client_msg_id).exists():
            return BranchChange(TurnStart(thread, None, False), None, 0)
        _refuse_while_running(thread)
        users = thread.messages.filter(role=Message.Role.USER)
        if message_id is None:
            edited = users.order_by("-order").first()
            if edited is None:
                raise NothingToRewind
        else:
            edited = users.filter(pk=_message_pk(message_id)).first()
            if edited is None:
                raise NotFound
        run = _open_run(thread)
        removed = _hide_from(thread, edited.order, under=edited.pk)
        version = Message.objects.create(
            thread=thread,
            run=run,
            order=edited.order,
            role=Message.Role.USER,
            content=content,
            client_msg_id=client_msg_id,
            attachments=edited.attachments,
            parent_id=edited.parent_id,
        )
        _changed(thread, versions=True, sent=True)
        rewound = (edited.pk, content, removed[1:])
        turn = TurnStart(thread, run, False)
        return BranchChange(turn, version.pk, version.order, removed, rewound, *_view(thread, version.order))


# --- switch -----------------------------------------------------------------------------------


def switch(*, user, thread_id: object, message_id: object, to: object) -> BranchChange:
    """Show version `to` of the point where message `message_id` of the branch shown stands: the branch from there
    is hidden and `to`'s is shown again as it was left. Refused while a run is active (RunActive); NotFound when
    `message_id` is not shown or `to` is not one of its versions. Switching to the version shown changes nothing
    (removed empty)."""
    with transaction.atomic():
        thread = get_thread_for_user(user, thread_id)
        _refuse_while_running(thread)
        shown = thread.messages.filter(pk=_message_pk(message_id)).first()
        if shown is None or not shown.is_version_point():
            raise NotFound
        target = (
            Message.all_versions.filter(thread=thread, pk=_message_pk(to), parent_id=shown.parent_id, role=shown.role)
            .only("pk", "active")
            .first()
        )
        if target is None:
            raise NotFound
        if target.active:
            return BranchChange(TurnStart(thread, None, False), target.pk, shown.order)
        removed = _hide_from(thread, shown.order, under=shown.pk)
        Message.all_versions.filter(thread=thread, hidden_under=target.pk).update(active=True, hidden_under=None)
        _changed(thread, versions=True, sent=False)
        turn = TurnStart(thread, None, False)
        return BranchChange(turn, target.pk, shown.order, removed, None, *_view(thread, shown.order))


# --- what a page shows of them ------------------------------------------------------------------


def versions_of(thread_id: uuid.UUID, shown: Iterable[Message]) -> dict[int, VersionsView]:
    """`versions` of each shown message that has more than one: {index (1-based, in the order they were made),
    count, ids}. One statement, through the index on `parent`: only the versions of the points shown (a page's, for
    a paged snapshot), however many the thread has."""
    points = [message for message in shown if message.is_version_point()]
    if not points:
        return {}
    parents = Q(parent_id__in={message.parent_id for message in points if message.parent_id is not None})
    if any(message.parent_id is None for message in points):  # the thread's first user message and its edits
        parents |= Q(parent__isnull=True, role=Message.Role.USER)
    rows = (
        Message.all_versions.filter(thread_id=thread_id)
        .filter(parents)
        .filter(Q(role=Message.Role.USER) | Q(role=Message.Role.ASSISTANT, parent__isnull=False))
        .order_by("pk")
        .values_list("pk", "parent_id", "role")
    )
    siblings: dict[tuple[int | None, str], list[int]] = defaultdict(list)
    for pk, parent_id, role in rows:
        siblings[(parent_id, role)].append(pk)
    found: dict[int, VersionsView] = {}
    for message in points:
        ids = siblings.get((message.parent_id, message.role), [])
        if len(ids) > 1 and message.pk in ids:
            found[message.pk] = {"index": ids.index(message.pk) + 1, "count": len(ids), "ids": ids}
    return found


# --- helpers --------------------------------------------------------------------------------------


def _view(thread: Thread, order: int) -> tuple[list[MessageView], SummaryView | None]:
    from .snapshot import first_shown_after, message_views, summary_view

    shown, _ = message_views(thread, from_order=order)
    summary = None
    if thread.summary:
        summary = summary_view(thread.summary, first_shown_after(thread.pk, thread.summary_through))
    return shown, summary


def _message_pk(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise NotFound from None


def _refuse_while_running(thread: Thread) -> None:
    if Run.objects.filter(thread=thread, status__in=Run.ACTIVE_STATUSES).exists():
        raise RunActive


def _open_run(thread: Thread) -> Run:
    """The run that answers the new version: refused once the person's daily tokens are spent, or when another run
    became active meanwhile (the one-active-run constraint)."""
    groups = check_may_run(thread)
    check_budget(thread.owner_id, groups=groups)
    try:
        with transaction.atomic():
            return Run.objects.create(
                thread=thread,
                model_label=thread_model_info(thread)["label"],
                step_limit=agent_step_limit(thread_agent(thread)),
            )
    except IntegrityError:
        raise RunActive from None


def _hide_from(thread: Thread, order: int, *, under: int) -> list[int]:
    """Hide the branch shown from `order` on, as the branch of version `under`; returns the ids hidden, in order."""
    tail = thread.messages.filter(order__gte=order)
    hidden = list(tail.order_by("order").values_list("pk", flat=True))
    tail.update(active=False, hidden_under=under)
    return hidden


def _changed(thread: Thread, *, versions: bool, sent: bool) -> None:
    """The thread after a change of branch: it has versions now; a regenerate or an edit is activity (the sidebar
    orders chats by it), a switch is not; and its summary is the latest one made on the branch it now shows."""
    changes: dict[str, Any] = {}
    if versions and not thread.has_versions:
        thread.has_versions = changes["has_versions"] = True
    if sent:
        changes["updated_at"] = timezone.now()
    summary = (
        ThreadSummary.objects.filter(thread=thread, through_message__active=True)
        .order_by("-created_at", "-id")
        .values_list("text", "through_order")
        .first()
    )
    text, through = summary if summary is not None else ("", None)
    if (text, through) != (thread.summary, thread.summary_through):
        thread.summary, thread.summary_through = changes["summary"], changes["summary_through"] = text, through
    if changes:
        Thread.objects.filter(pk=thread.pk).update(**changes)  # update(): updated_at only when set here
