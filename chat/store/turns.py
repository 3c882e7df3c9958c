"""Opening turns: a user's message and its run, retry and continue, the thread's model; the thread list and
message search. Synchronous, keyword-only: async code calls them through database_sync_to_async (chat/runs/)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, cast

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from agents.services import AgentSpec, agent_spec
from agents.services import model_choice as agent_model_choice
from agents.services import step_limit as agent_step_limit
from attachments.services import claim as claim_attachments
from modelconfig.services import config_for
from tools.services import groups_of, groups_of_id

from ..access import NotFound, get_thread_for_user
from ..live.views import AgentView, AllowView, ModelView, SentMessageView
from ..models import Message, Run, Source, Thread, ToolCall, ToolCallDecision
from ..usage import check_budget
from . import search

TITLE_LENGTH = 60


class RunActive(Exception):
    """The thread already has a run that is running or waiting."""


class NothingToFollowUp(Exception):
    """Retry or continue asked of a thread whose last run does not allow it."""


@dataclass(frozen=True)
class TurnStart:
    thread: Thread
    run: Run | None  # None when the message had already been sent (a replayed frame)
    created_thread: bool
    # A retry that asks for decisions again (the run waits, no task): (tool call id, the choices offered) per call.
    awaiting: tuple[tuple[str, AllowView], ...] = ()
    # The user's message that opened the run (message.send) as a snapshot shows it, with its client_msg_id, which
    # run.started carries to the thread's other tabs; None for other runs.
    user_message: SentMessageView | None = None
    # The message went to an archived chat, which it took out of the archive (the person's lists are told).
    unarchived: bool = False
    # The run's first answer when it was inserted with the run (a regenerate's new version: chat/store/versions.py).
    answer_message_id: int | None = None


def make_title(content: str) -> str:
    line = " ".join(content.split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


def start_turn(
    *,
    user,
    thread_id: str | None,
    content: str,
    client_msg_id: uuid.UUID,
    step_limit: int | None = None,
    model_label: str | None = None,
    model_choice: str | None = None,
    agent=None,
    attachments: list[str] | None = None,
    disabled_tools: list[str] | None = None,
    source: str = Source.CHAT,
    api_key_id: int | None = None,
    history: list[tuple[str, str]] | None = None,
    groups: frozenset[str] | None = None,
) -> TurnStart:
    """Store the user's message and open a run. Idempotent by client_msg_id; refuses a second active run.
    `model_choice` (a checked model id) becomes the thread's model; the run is labelled with the thread's model.
    `agent`: the Agent a new thread takes (ignored for an existing thread, which keeps its own). `step_limit`: None
    for the thread's agent's (agents/services.py step_limit). `attachments`: ids of the person's unsent uploads the
    message carries (AttachmentNotFound, ImagesNotSupported: nothing written). `disabled_tools`: checked names of the
    tools a new thread starts with turned off (chat/store/thread_tools.py; ignored for an existing thread). `source`
    and `api_key_id`: who asked (chat/caller.py), kept on a new thread (source) and on the run. `history`: (role,
    content) pairs a new thread holds before the message, as a program sends a conversation (api/openai_*.py).
    `groups`: the person's group names, when the caller read them (else kept per settings stamp, or read)."""
    if thread_id is not None and (not getattr(user, "is_authenticated", False) or not user.is_active):
        raise NotFound
    # One transaction: whatever fails (the one-active-run constraint refusing a simultaneous turn, a message the
    # database refuses), no thread, run or message of this turn is left, least of all a run left active. No savepoint:
    # inside a caller's transaction (chat/runs/start.py open_turn) a failure undoes the caller's whole transaction too.
    try:
        with transaction.atomic(savepoint=False):
            return _open_turn(
                user=user,
                thread_id=thread_id,
                content=content,
                client_msg_id=client_msg_id,
                step_limit=step_limit,
                model_label=model_label,
                model_choice=model_choice,
                agent=agent,
                attachments=attachments,
                disabled_tools=disabled_tools,
                source=source,
                api_key_id=api_key_id,
                history=history,
                groups=groups,
            )
    except IntegrityError:
        # The one-active-run constraint refused a simultaneous turn's run, or a simultaneous turn wrote its
        # message first (the message's uniqueness): this turn never happened.
        raise RunActive from None


def _open_turn(
    *,
    user,
    thread_id: str | None,
    content: str,
    client_msg_id: uuid.UUID,
    step_limit: int | None,
    model_label: str | None,
    model_choice: str | None,
    agent=None,
    attachments: list[str] | None = None,
    disabled_tools: list[str] | None = None,
    source: str = Source.CHAT,
    api_key_id: int | None = None,
    history: list[tuple[str, str]] | None = None,
    groups: frozenset[str] | None = None,
) -> TurnStart:
    created = thread_id is None
    if created:
        # In any version: a replayed send of a message an edit has since hidden is still the same send.
        earlier = Message.all_versions.filter(thread__owner=user, client_msg_id=client_msg_id).first()
        if earlier is not None:
            return TurnStart(thread=earlier.thread, run=None, created_thread=False)
        thread = Thread.objects.create(
            owner=user,
            title=make_title(content),
            model_choice=model_choice or "",
            agent=agent,
            disabled_tools=disabled_tools or [],
            source=source,
        )
        thread.agent_spec = AgentSpec.of(agent) if agent is not None else None
        last_order, last_message = _write_history(thread, history or [])
    else:
        thread = _thread_for_turn(user, thread_id, client_msg_id)
        if thread.replayed:
            return TurnStart(thread=thread, run=None, created_thread=False)
        last_order, last_message = thread.last_order or 0, thread.last_message
        # Kept in this process per settings stamp (read with the thread): no statement of its own.
        thread.agent_spec = agent_spec(thread.agent_id, stamp=thread.stamp)
    spec = thread.agent_spec
    stamp = None if created else thread.stamp
    # The person's groups, kept per settings stamp (no statement of a turn's own on a thread): the thread's agent and
    # model must be theirs to use now (tools/groups.py), else nothing of this turn is written.
    if groups is None:
        groups = groups_of(user, stamp=stamp)
    if spec is not None:
        spec.check(user.pk, groups)
    if step_limit is None:
        step_limit = agent_step_limit(spec)
    # A new run: refused once the person's daily tokens are spent (chat/usage.py).
    check_budget(user.pk, stamp=stamp, groups=groups)
    changes: dict[str, Any] = {} if created else {"updated_at": timezone.now()}
    unarchived = not created and thread.archived_at is not None
    if unarchived:  # a chat written in again is current again, as in the chat apps people know
        thread.archived_at = changes["archived_at"] = None
    if model_choice is not None and model_choice != thread.model_choice:
        thread.model_choice = changes["model_choice"] = model_choice
    _, info = config_for(agent_model_choice(thread.model_choice, spec), stamp=stamp, groups=groups)
    run = Run.objects.create(
        thread=thread,
        model_label=info["label"] if model_label is None else model_label,
        step_limit=step_limit,
        source=source,
        api_key_id=api_key_id,
    )
    message = Message.objects.create(
        thread=thread,
        run=run,
        order=last_order + 1,
        role=Message.Role.USER,
        content=content,
        client_msg_id=client_msg_id,
        parent_id=last_message,  # where an edit of it forks from (chat/store/versions.py)
    )
    if attachments:
        # The model must take images before anything is kept: raising here undoes the turn's transaction.
        message.attachments = claim_attachments(
            user=user,
            ids=attachments,
            message=message,
            supports_images=bool(info.get("supports_images")),
            model_name=info.get("name") or info.get("label") or "This model",
        )
        Message.objects.filter(pk=message.pk).update(attachments=message.attachments)
        if created and not thread.title:  # a new chat opened with files only is named for them
            thread.title = make_title(", ".join(item.get("name", "") for item in message.attachments))
            Thread.objects.filter(pk=thread.pk).update(title=thread.title)
    if changes:
        Thread.objects.filter(pk=thread.pk).update(**changes)
    return TurnStart(
        thread=thread, run=run, created_thread=created, user_message=sent_view(message), unarchived=unarchived
    )


def _write_history(thread: Thread, history: list[tuple[str, str]]) -> tuple[int, int | None]:
    """A new thread's messages before its first turn, in order, each the parent of the next: the order and id of
    the last (0 and None for none)."""
    parent = None
    for order, (role, content) in enumerate(history, start=1):
        parent = Message.objects.create(thread=thread, order=order, role=role, content=content, parent_id=parent).pk
    return len(history), parent


def sent_view(message: Message) -> SentMessageView:
    """A sent message as a snapshot shows it (chat/store/snapshot.py message_views), and the client_msg_id it was
    sent with: the tab that sent it matches its own bubble by it, the thread's other tabs show it."""
    view: SentMessageView = {
        "id": message.pk,
        "role": message.role,
        "content": message.content,
        "status": message.status,
        "client_msg_id": str(message.client_msg_id) if message.client_msg_id else None,
    }
    if message.attachments:
        view["attachments"] = message.attachments
    return view


def _thread_for_turn(user, thread_id: object, client_msg_id: uuid.UUID) -> Thread:
    """The user's thread and what opening a turn on it reads: whether this message was stored already (a replayed
    frame), the order of its last message, and the tool settings' stamp (the thread's model configuration as this
    process found it for that stamp). An active run is not looked for: the database refuses a second one
    (one_active_run_per_thread), and start_turn says RunActive. Written out in SQL (chat/queries.py): the ORM
    spent milliseconds of CPU building it, on the path of every turn's first model request."""
    from ..access import parse_uuid
    from ..queries import thread_for_turn

    thread = thread_for_turn(user.pk, parse_uuid(thread_id), client_msg_id)
    if thread is None:
        raise NotFound
    thread.owner = user  # found by its owner: the run's tools are this user's
    return thread


def thread_model_info(thread: Thread | None, *, stamp: str | None = None) -> ModelView:
    """What a browser may see of the model the thread uses (the default for no thread): never the key. The thread's
    agent's model unless the person picked one (agents/services.py model_choice). `stamp`: the settings stamp the
    caller read, under which the configuration is kept in this process (modelconfig.services.config_for)."""
    # modelconfig builds it (public_info, env_info), below chat: named here, where it leaves for the client.
    if thread is None:
        return cast(ModelView, config_for(None, stamp=stamp)[1])
    return cast(ModelView, config_for(agent_model_choice(thread.model_choice, thread_agent(thread)), stamp=stamp)[1])


def check_may_run(thread: Thread) -> frozenset[str]:
    """Before a run that follows others on `thread` (retry, continue, a new version): NotPermitted when its owner's
    groups no longer allow the thread's agent or model (tools/groups.py), so nothing is written. Their groups."""
    groups = groups_of_id(thread.owner_id, stamp=None)
    spec = thread_agent(thread)
    if spec is not None:
        spec.check(thread.owner_id, groups)
    config_for(agent_model_choice(thread.model_choice, spec), groups=groups)
    return groups


def thread_agent(thread: Thread) -> AgentSpec | None:
    """The thread's agent as a run reads it (None: none); read once per thread object."""
    if not hasattr(thread, "agent_spec"):
        thread.agent_spec = agent_spec(thread.agent_id)
    return thread.agent_spec


def thread_agent_info(thread: Thread) -> AgentView | None:
    """`agent` of thread.created and thread.snapshot: {slug, name}, or null."""
    spec = thread_agent(thread)
    return spec.public_info() if spec is not None else None


def set_thread_model(*, user, thread_id: object, model_choice: str) -> Thread:
    """Store the model the person picked for their thread (a checked id; see modelconfig.services.check_choice)."""
    thread = get_thread_for_user(user, thread_id)
    Thread.objects.filter(pk=thread.pk).update(model_choice=model_choice)
    thread.model_choice = model_choice
    return thread


# What the sidebar shows of a thread (chat/templatetags/sidebar_rows.py): a page reads no more of its columns.
SIDEBAR_FIELDS = ("id", "title", "pinned_at", "archived_at", "updated_at", "source", "agent__slug")


@dataclass(frozen=True, slots=True)
class SidebarThread:
    """A chat as the sidebar lists it: read as values, not as a model instance, since a full sidebar is 300 rows
    and a model instance of a deferred class cost more than the row's rendering (docs/performance.md)."""

    id: uuid.UUID
    title: str
    pinned_at: Any
    archived_at: Any
    updated_at: Any
    source: str
    agent_slug: str | None

    @property
    def pk(self) -> uuid.UUID:
        return self.id


def _listed(user):
    threads = Thread.objects.filter(owner=user, archived_at__isnull=True)
    return threads.order_by(F("pinned_at").desc(nulls_last=True), "-updated_at")[:200].values_list(*SIDEBAR_FIELDS)


def _archived(user):
    threads = Thread.objects.filter(owner=user, archived_at__isnull=False)
    return threads.order_by("-archived_at")[:100].values_list(*SIDEBAR_FIELDS)


def list_threads(*, user) -> list[SidebarThread]:
    """The sidebar's chats: the pinned ones first (newest pin first), then the rest by activity; not the archived."""
    return [SidebarThread(*row) for row in _listed(user)]


def list_archived_threads(*, user) -> list[SidebarThread]:
    """The sidebar's "Archived" group: the last archived first."""
    return [SidebarThread(*row) for row in _archived(user)]


def _sidebar_order(thread: SidebarThread) -> tuple:
    """list_threads' ORDER BY: the pinned first, newest pin first; then by activity, newest first."""
    pinned = thread.pinned_at is not None
    return (not pinned, -thread.pinned_at.timestamp() if pinned else 0.0, -thread.updated_at.timestamp())


def sidebar_threads(*, user) -> tuple[list[SidebarThread], list[SidebarThread]]:
    """list_threads and list_archived_threads in one statement (UNION ALL of the two, each through its own index):
    every page shows both, and on a busy machine each trip to the database is a wait of its own. A row's list is
    its archived_at; each list is put in its order again here, since a UNION keeps no order."""
    if not connection.features.supports_slicing_ordering_in_compound:  # SQLite: in the process, no trip to save
        return list_threads(user=user), list_archived_threads(user=user)
    listed, archived = [], []
    for row in _listed(user).union(_archived(user), all=True):
        thread = SidebarThread(*row)
        (listed if thread.archived_at is None else archived).append(thread)
    listed.sort(key=_sidebar_order)
    archived.sort(key=lambda t: -t.archived_at.timestamp())
    return listed, archived


# --- runs that follow a run: retry and continue ----------------------------------------


def start_followup_run(
    *,
    user,
    thread_id: object,
    kind: str,
    step_limit: int | None = None,
    model_label: str | None = None,
    source: str = Source.CHAT,
    api_key_id: int | None = None,
) -> TurnStart:
    """A new run on the thread's history without a new message: `retry` after a run that failed, was
    interrupted or cancelled; `continue` after one that stopped at its step limit. `source` and `api_key_id`: who
    asked (chat/caller.py), kept on the run."""
    with transaction.atomic():
        thread = get_thread_for_user(user, thread_id)
        last = thread.runs.order_by("-started_at", "-id").first()
        if last is None:
            raise NothingToFollowUp
        if last.is_active():
            raise RunActive
        if not (last.can_retry() if kind == "retry" else last.can_continue()):
            raise NothingToFollowUp
        groups = check_may_run(thread)
        if model_label is None:
            model_label = thread_model_info(thread)["label"]
        check_budget(thread.owner_id, groups=groups)
        if step_limit is None:
            step_limit = agent_step_limit(thread_agent(thread))
        unasked = _stopped_at_approval(last) if last.status == Run.Status.CANCELLED else []
        try:
            with transaction.atomic():
                run = Run.objects.create(
                    thread=thread,
                    model_label=model_label,
                    step_limit=step_limit,
                    status=Run.Status.WAITING if unasked else Run.Status.RUNNING,
                    source=source,
                    api_key_id=api_key_id,
                )
        except IntegrityError:
            raise RunActive from None
        if unasked:
            _ask_again(unasked, run)
    return TurnStart(
        thread=thread, run=run, created_thread=False, awaiting=tuple((str(c.pk), c.approval) for c in unasked)
    )


def _stopped_at_approval(run: Run) -> list[ToolCall]:
    """The calls a Stop cancelled while they waited for a person's decision (none was made): a retry asks again
    rather than telling the model they were cancelled."""
    return list(
        ToolCall.objects.filter(
            message__run=run, status=ToolCall.Status.CANCELLED, approval__isnull=False, decision__isnull=True
        ).order_by("index")
    )


def _ask_again(calls: list[ToolCall], run: Run) -> None:
    """The calls wait again, as the new (waiting) run's step: a decision resumes `run` (see approved_calls). Calls of
    that step a person had approved before the Stop go back to requested, so they run when it resumes."""
    message_id = calls[0].message_id
    Message.objects.filter(pk=message_id).update(run=run)
    ToolCall.objects.filter(pk__in=[c.pk for c in calls]).update(
        status=ToolCall.Status.AWAITING_APPROVAL, error="", finished_at=None
    )
    ToolCall.objects.filter(
        message_id=message_id,
        status=ToolCall.Status.CANCELLED,
        decision__decision__in=[ToolCallDecision.Decision.APPROVE, ToolCallDecision.Decision.EDIT],
    ).update(status=ToolCall.Status.REQUESTED, error="", finished_at=None)


def search_messages(*, user, query: str, limit: int) -> list[dict[str, Any]]:
    """The user's own user and assistant messages (every version) with the words of `query`, newest first
    (chat/store/search.py)."""
    return [hit.as_dict() for hit in search.search_messages(user_id=user.pk, query=query, limit=limit)]
