"""The run API's endpoints (api/run_api.py holds the API, its key check and its errors; docs/api.md, "The run API").

Each does what the websocket's frame of the same name does (chat/consumers.py), through the same calls into the run
layer, as the key's person: their threads only (another's id is `not_found`, as a random one is), their send limit
(a token per model request: 429), their budget, and a turn marked as the API's, with its key (chat/caller.py)."""

# Annotations are evaluated (no `from __future__ import annotations`): ninja reads them through @detached_view.

import asyncio
import json
import uuid
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from ninja import Field, Query, Schema

from audit.recording import client_ip
from chat import live, rewind, runs, store
from chat.access import NotFound, get_thread_for_user
from chat.broadcast import tell_user
from chat.consumers import refuse_unstorable_text
from chat.live import events
from chat.models import Message, Thread
from chat.ratelimit import send_limit
from chat.runs.detached import detached_view
from delivery import REDIS_GONE, group_name

from .auth import caller_of
from .run_api import REDIS_UNAVAILABLE, ApiError, api, db, refusals_of
from .schemas import (
    ContinueIn,
    DecideIn,
    DecideOut,
    EditIn,
    ErrorBody,
    InputIn,
    InputOut,
    MessageIn,
    NewThreadIn,
    Snapshot,
    StoppedOut,
    SwitchIn,
    ThreadPage,
    TurnOut,
)

#: The refusals every endpoint may answer with (the OpenAPI schema lists them).
ERRORS = {
    400: ErrorBody,
    401: ErrorBody,
    403: ErrorBody,
    404: ErrorBody,
    409: ErrorBody,
    422: ErrorBody,
    429: ErrorBody,
}
#: What a send answers: 202 with the run it started, 200 when it was sent already.
SENT = {202: TurnOut, 200: TurnOut, **ERRORS, 413: ErrorBody}
#: How long POST /threads/{id}/input waits to hear whether the run took the answer (it runs in another process).
INPUT_WAIT_SECONDS = 5.0
#: An id given in a path: no more is read of one (a thread's is a UUID, a tool call's too).
MAX_ID_CHARS = 64


class Page(Schema):
    limit: int = Field(20, ge=1, le=100)
    offset: int = Field(0, ge=0, le=1_000_000)


def person(request):
    return request.auth.user


async def owned_thread(request, thread_id: str, frame_type: str) -> Thread:
    with refusals_of({"type": frame_type}):
        return await db(get_thread_for_user)(person(request), thread_id[:MAX_ID_CHARS])


async def take_send_token(request) -> None:
    """A request that makes a model request takes a token of its person's send limit, as a chat frame does."""
    if not await send_limit().aallow(person(request).pk):
        raise ApiError("rate_limited", "Too many messages at once; wait a moment and send again.")


def refuse_while_redis_is_gone() -> None:
    """As the websocket: nothing is written while this process cannot hand a run on (chat/consumers.py)."""
    if not live.delivery().reachable:
        raise ApiError("unavailable", REDIS_UNAVAILABLE)


def checked_content(text: str) -> str:
    """A message's text, stripped: not empty, and no longer than a chat frame may be."""
    content = text.strip()
    if not content:
        raise ApiError("bad_frame", "content: the message is empty.")
    if len(content.encode("utf-8", "surrogatepass")) > settings.AGENTWEB_MAX_FRAME_BYTES:
        limit = settings.AGENTWEB_MAX_FRAME_BYTES // 1024
        raise ApiError("payload_too_large", f"content: a message may be at most {limit} KiB.")
    return content


async def launch(turn: store.TurnStart, **kwargs) -> None:
    """Start a written turn's run; should Redis go out of reach just then, its run fails (and can be retried)."""
    try:
        await runs.launch_run(turn, **kwargs)
    except REDIS_GONE:
        await runs.fail_unlaunched(turn, REDIS_UNAVAILABLE)
        raise


# --- threads ----------------------------------------------------------------------------------------------------


@api.get("/threads", response={200: ThreadPage, **ERRORS}, tags=["threads"])
@detached_view
async def list_threads(request, page: Query[Page]):
    """The key's person's threads (archived ones too), the most recently active first."""
    rows = await db(_threads)(person(request), page.limit, page.offset)
    more = len(rows) > page.limit
    return {"threads": rows[: page.limit], "next_offset": page.offset + page.limit if more else None}


def _threads(user, limit: int, offset: int) -> list[dict[str, Any]]:
    rows = Thread.objects.filter(owner=user).select_related("agent").order_by("-updated_at", "-created_at")
    return [
        {
            "id": thread.pk,
            "title": thread.title,
            "source": thread.source,
            "agent": {"slug": thread.agent.slug, "name": thread.agent.name} if thread.agent else None,
            "pinned": thread.pinned_at is not None,
            "archived": thread.archived_at is not None,
            "created_at": thread.created_at,
            "updated_at": thread.updated_at,
        }
        for thread in rows[offset : offset + limit + 1]
    ]


@api.get("/threads/{thread_id}", response={200: Snapshot, **ERRORS}, tags=["threads"])
@detached_view
async def read_thread(request, thread_id: str):
    """The thread with its messages, their tool calls and versions, and its latest run: the websocket's
    `thread.snapshot` (docs/protocol.md). A streaming answer's text lags here: follow the events for it live."""
    thread = await owned_thread(request, thread_id, "thread.subscribe")
    await runs.ensure_recovered()
    seq = await live.last_seq(thread.pk)
    snapshot = await db(_snapshot)(thread, seq)
    return HttpResponse(json.dumps(snapshot, ensure_ascii=False), content_type="application/json")


def _snapshot(thread: Thread, seq: int):
    return store.build_snapshot(thread=thread, seq=seq, model=store.thread_model_info(thread))


@api.post("/threads", response=SENT, tags=["threads"])
@detached_view
async def create_thread(request, body: NewThreadIn):
    """A new thread, with its first message: its run starts (202). Same as POST /threads/new/messages."""
    return await send(request, None, body)


@api.post("/threads/{thread_id}/messages", response=SENT, tags=["runs"])
@detached_view
async def send_message(request, thread_id: str, body: MessageIn):
    """The person's message to the thread (`new`: a new thread); a run answers it (202, follow its events). The same
    `client_msg_id` again changes nothing (200, `run` null)."""
    return await send(request, None if thread_id == "new" else thread_id[:MAX_ID_CHARS], body)


async def send(request, thread_id: str | None, body: MessageIn):
    frame = {"type": "message.send", **body.dict(exclude_none=True)}
    content = checked_content(body.content)
    refuse_unstorable_text(frame)
    title = getattr(body, "title", None)
    if title is not None:
        title = " ".join(title.split())
        if not title:
            raise ApiError("bad_frame", "title: empty.")
    refuse_while_redis_is_gone()
    await take_send_token(request)
    key = request.auth
    with refusals_of(frame):
        turn, setup = await runs.begin_turn(
            user=key.user,
            session_key=None,
            thread_id=thread_id,
            content=content,
            client_msg_id=body.client_msg_id or uuid.uuid4(),
            model=body.model,
            agent=body.agent,
            caller=caller_of(key),
        )
    if turn.run is None:  # the same client_msg_id again: stored already, nothing more done
        return 200, {"thread": turn.thread.pk, "message": None, "run": None, "created_thread": False}
    if title is not None and turn.created_thread:
        await db(Thread.objects.filter(pk=turn.thread.pk).update)(title=title)
        turn.thread.title = title
    await launch(turn, setup=setup)
    if title is not None and turn.created_thread:
        await tell_user(key.user.pk, events.thread_renamed(str(turn.thread.pk), title))
    message = turn.user_message["id"] if turn.user_message else None
    started = {"thread": turn.thread.pk, "message": message, "run": turn.run.pk}
    return 202, {**started, "created_thread": turn.created_thread}


# --- a run: stop, retry, continue ----------------------------------------------------------------------------------


@api.post("/threads/{thread_id}/stop", response={200: StoppedOut, **ERRORS}, tags=["runs"])
@detached_view
async def stop(request, thread_id: str):
    """Stop the thread's running (or waiting) answer, as the chat's Stop does."""
    thread = await owned_thread(request, thread_id, "run.cancel")
    if not await runs.cancel(thread.pk):
        raise ApiError("no_active_run", "This thread has no running answer to stop.")
    return {"stopped": True}


@api.post("/threads/{thread_id}/retry", response={202: TurnOut, **ERRORS}, tags=["runs"])
@detached_view
async def retry(request, thread_id: str):
    """A new run after one that failed, was interrupted or stopped."""
    return await follow_up(request, thread_id, "retry", frame_type="run.retry")


@api.post("/threads/{thread_id}/continue", response={202: TurnOut, **ERRORS}, tags=["runs"])
@detached_view
async def continue_run(request, thread_id: str, body: ContinueIn | None = None):
    """A new run after one that stopped at its step limit, with `steps` more (default: the agent's limit)."""
    steps = body.steps if body is not None else None
    return await follow_up(request, thread_id, "continue", frame_type="run.continue", steps=steps)


async def follow_up(request, thread_id: str, kind: str, *, frame_type: str, steps: int | None = None):
    refuse_while_redis_is_gone()
    await take_send_token(request)
    key = request.auth
    with refusals_of({"type": frame_type}):
        turn = await runs.begin_followup(
            user=key.user, thread_id=thread_id[:MAX_ID_CHARS], kind=kind, steps=steps, caller=caller_of(key)
        )
    await launch(turn)
    return 202, {"thread": turn.thread.pk, "message": None, "run": turn.run.pk, "created_thread": False}


# --- decisions and answers -------------------------------------------------------------------------------------------


@api.post("/tool-calls/{tool_call_id}/decide", response={200: DecideOut, **ERRORS}, tags=["runs"])
@detached_view
async def decide(request, tool_call_id: str, body: DecideIn):
    """Decide a tool call that waits for approval: approve, edit (with `args`), reject or respond (`reply`) with a
    `message`. When it was the last decision its step waited for, the run goes on (`resumed`)."""
    decision = "respond" if body.decision == "reply" else body.decision
    frame = {"type": "tool_call.decide", **body.dict(), "decision": decision}
    refuse_unstorable_text(frame)
    # The decision that completes a paused step resumes the run (a model request): it takes a send token, given back
    # when it resumed nothing (another call still waits, or it was refused), as the websocket's does.
    await take_send_token(request)
    resumed = False
    try:
        with refusals_of(frame):
            resumed = await runs.decide(
                user=person(request),
                tool_call_id=tool_call_id[:MAX_ID_CHARS],
                decision=decision,
                args=body.args,
                message=body.message,
                for_thread=body.for_thread,
                ip=client_ip(request),
                via="api",
            )
    finally:
        if not resumed:
            await send_limit().agive_back(person(request).pk)
    return {"resumed": resumed}


@api.post("/threads/{thread_id}/input", response={200: InputOut, 202: InputOut, **ERRORS}, tags=["runs"])
@detached_view
async def answer_input(request, thread_id: str, body: InputIn):
    """Answer a running tool's request for input (`tool_call.input_requested`). 200 once the tool took the answer;
    a refused one (closed already, or content that does not fit the form) is the error the chat would show."""
    frame = {"type": "tool_call.input", **body.dict()}
    refuse_unstorable_text(frame)
    thread = await owned_thread(request, thread_id, "tool_call.input")
    delivery = live.delivery()
    # The run may be another process's: its refusal comes to an address of ours, its taking the answer to the
    # thread's followers as `tool_call.input_answered`. Both are waited for here, briefly.
    address = await delivery.new_address()
    group = group_name(thread.pk)
    await delivery.attach(address, group)
    try:
        with refusals_of(frame):
            await runs.answer_input(
                thread=thread,
                user=person(request),
                tool_call=body.tool_call,
                request=body.request,
                action=body.action,
                content=body.content,
                reply_to=address,
                ref=None,
            )
            answered = await _answer_heard(address, body.request)
    finally:
        await delivery.detach(address, group)
    return (200, {"answered": True}) if answered else (202, {"answered": False})


async def _answer_heard(address: str, request_id: str) -> bool:
    """True once the thread tells that request `request_id` was answered; runs.InputRefused when the run's process
    refuses the answer; False when neither is heard within INPUT_WAIT_SECONDS."""
    try:
        async with asyncio.timeout(INPUT_WAIT_SECONDS):
            while True:
                message = await live.delivery().receive(address)
                if message.get("type") == "input.refused":
                    raise runs.InputRefused(message["code"], message["message"])
                if message.get("type") != "thread.event":
                    continue
                event = json.loads(message["text"])
                if event.get("type") == "tool_call.input_answered" and event.get("request") == request_id:
                    return True
    except TimeoutError:
        return False


@api.post("/threads/{thread_id}/regenerate", response={202: TurnOut, **ERRORS}, tags=["runs"])
@detached_view
async def regenerate(request, thread_id: str):
    """Answer the thread's last message again, as a new version of its answer (the old one is kept: switch-version)."""
    refuse_while_redis_is_gone()
    await take_send_token(request)
    with refusals_of({"type": "run.regenerate"}):
        turn = await rewind.begin_regenerate(user=person(request), thread_id=thread_id[:MAX_ID_CHARS])
    await launch(turn)
    return 202, {"thread": turn.thread.pk, "message": None, "run": turn.run.pk, "created_thread": False}


@api.post("/messages/{message_id}/edit", response={202: TurnOut, 200: TurnOut, **ERRORS, 413: ErrorBody}, tags=["runs"])
@detached_view
async def edit(request, message_id: int, body: EditIn):
    """A new version of one of the person's messages, answered by a new run (everything after it leaves the view, and
    is kept as the other version). The same `client_msg_id` again changes nothing (200, `run` null)."""
    frame = {"type": "message.edit", "message": message_id, **body.dict(exclude_none=True)}
    content = checked_content(body.content)
    refuse_unstorable_text(frame)
    refuse_while_redis_is_gone()
    await take_send_token(request)
    user = person(request)
    thread_id = await db(_thread_of_message)(user, message_id)
    with refusals_of(frame):
        if thread_id is None:
            raise NotFound
        turn = await rewind.begin_edit(
            user=user,
            thread_id=str(thread_id),
            message_id=message_id,
            content=content,
            client_msg_id=body.client_msg_id or uuid.uuid4(),
        )
    if turn.run is None:
        return 200, {"thread": turn.thread.pk, "message": None, "run": None, "created_thread": False}
    await launch(turn)
    return 202, {"thread": turn.thread.pk, "message": None, "run": turn.run.pk, "created_thread": False}


@api.post("/messages/{message_id}/switch-version", response={200: Snapshot, **ERRORS}, tags=["threads"])
@detached_view
async def switch_version(request, message_id: int, body: SwitchIn):
    """Show another version of a message (a regenerated answer, an edited message): `to` is one of its
    `versions.ids`. Returns the thread as it then stands; its followers get `thread.branch_changed`."""
    frame = {"type": "message.switch_version", "message": message_id, "to": body.to}
    user = person(request)
    thread_id = await db(_thread_of_message)(user, message_id)
    with refusals_of(frame):
        if thread_id is None:
            raise NotFound
        turn = await rewind.begin_switch(user=user, thread_id=str(thread_id), message_id=message_id, to=body.to)
    seq = await live.last_seq(turn.thread.pk)
    snapshot = await db(_snapshot)(turn.thread, seq)
    return HttpResponse(json.dumps(snapshot, ensure_ascii=False), content_type="application/json")


def _thread_of_message(user, message_id: int) -> uuid.UUID | None:
    return (
        Message.objects.filter(pk=message_id, thread__owner=user, thread__owner__is_active=True)
        .values_list("thread_id", flat=True)
        .first()
    )
