"""A chat completion as a run: the turn opened as the key's person (a thread they see in the sidebar, marked as the
API's), and the run's events read back as the pieces an OpenAI client is sent."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from agents.services import agents_for_picker
from chat import live, runs
from chat.error_codes import REFUSED, client_error
from chat.frames import ClientError
from chat.models import Thread
from chat.ratelimit import send_limit
from delivery import REDIS_GONE
from modelconfig.services import DEFAULT_ID, available_models, config_for
from tools.services import groups_of, settings_stamp

from .auth import caller_of
from .errors import status_of
from .follow import Following
from .models import ApiKey
from .openai_format import CompletionRequest, Refused, usage_of
from .run_api import REDIS_UNAVAILABLE

#: A model configuration's id in /v1/models (an agent's is its slug, which holds no colon).
MODEL_PREFIX = "model:"


def model_list(user) -> list[dict[str, Any]]:
    """What the key's person may pick, in OpenAI's list format: their agents, then the model configurations (those
    their groups allow, as the chat's pickers show them: tools/groups.py)."""
    stamp = settings_stamp()
    entries = [
        {"id": agent["slug"], "object": "model", "created": 0, "owned_by": "agent", "name": agent["name"]}
        for agent in agents_for_picker(user, stamp=stamp)
    ]
    entries += [
        {"id": MODEL_PREFIX + model["id"], "object": "model", "created": 0, "owned_by": "model", "name": model["label"]}
        for model in available_models(groups=groups_of(user, stamp=stamp), stamp=stamp)
    ]
    return entries


def choice_of(user, name: str) -> tuple[str | None, str | None]:
    """The (agent slug, model id) a request's `model` names; Refused (404) when the person cannot pick it (their
    groups do not allow it: the same answer as for a name that does not exist)."""
    if name.startswith(MODEL_PREFIX):
        model_id = name[len(MODEL_PREFIX) :]
        models = available_models(groups=groups_of(user, stamp=None))
        if model_id == DEFAULT_ID or any(entry["id"] == model_id for entry in models):
            return None, model_id
    elif any(agent["slug"] == name for agent in agents_for_picker(user)):
        return name, None
    raise Refused(404, f"The model {name[:100]!r} does not exist or you cannot use it.", code="model_not_found")


def check_context(request: CompletionRequest, agent: str | None, model: str | None, user) -> None:
    """A conversation longer than the model's context window (at about four characters a token) is refused before
    anything is written: the chat would leave its oldest messages out, a program is told instead."""
    if agent is not None:
        model = next((entry["model"] or None for entry in agents_for_picker(user) if entry["slug"] == agent), None)
    window = config_for(model)[1].get("context_window")
    if window and request.characters() // 4 > window:
        raise Refused(
            400,
            f"The messages (about {request.characters() // 4:,} tokens) do not fit the model's context window"
            f" ({window:,} tokens).",
            code="context_length_exceeded",
            param="messages",
        )


async def open_run(key: ApiKey, request: CompletionRequest) -> tuple[Thread, int, Following]:
    """The turn written and its run launched, the thread followed from before it starts: (thread, run id, following).
    Refused, and nothing written, for what the chat would refuse (budget, rate limit, an unknown model)."""
    user = key.user
    agent, model = await database_sync_to_async(choice_of)(user, request.model)
    await database_sync_to_async(check_context)(request, agent, model, user)
    if not await send_limit().aallow(user.pk):
        raise Refused(429, "Too many requests at once; wait a moment and send again.", code="rate_limited")
    if not live.delivery().reachable:  # as the chat: nothing is written while a run cannot be handed on or followed
        raise Refused(503, REDIS_UNAVAILABLE, code="unavailable")
    frame = {"type": "message.send", "model": model or "", "agent": agent or ""}
    try:
        turn, setup = await runs.begin_turn(
            user=user,
            session_key=None,
            thread_id=None,
            content=request.content,
            client_msg_id=uuid.uuid4(),
            model=model,
            agent=agent,
            caller=caller_of(key),
            history=request.history,
        )
    except REFUSED as error:
        raise refused(client_error(error, frame)) from None
    except runs.SignedOut:
        raise Refused(401, "This API key is no longer valid.", code="invalid_api_key") from None
    # The turn is written: from here every way out leaves its run launched (or, Redis gone, failed and retryable),
    # never waiting for the stale limit.
    try:
        following = await Following(turn.thread.pk).open()
    except BaseException as error:
        await launch_unfollowed(turn, setup)  # the run goes on unfollowed, as a closed tab's does
        if isinstance(error, REDIS_GONE):
            message = f"The server cannot follow the run right now; it goes on in thread {turn.thread.pk}."
            raise Refused(503, message, code="unavailable") from None
        raise
    try:
        await launch(turn, setup)
    except BaseException:
        await following.close()
        raise
    return turn.thread, turn.run.pk, following


async def launch(turn, setup) -> None:
    """The written turn's run started; should Redis go out of reach just then, its run fails (and can be retried),
    as the run API's does (api/run_views.py `launch`)."""
    try:
        await runs.launch_run(turn, setup=setup)
    except REDIS_GONE:
        await runs.fail_unlaunched(turn, REDIS_UNAVAILABLE)
        raise Refused(503, REDIS_UNAVAILABLE, code="unavailable") from None


async def launch_unfollowed(turn, setup) -> None:
    """`launch`, for a turn no one follows: its refusal is not the request's to give (the request's own error is)."""
    with contextlib.suppress(Refused):
        await launch(turn, setup)


def refused(error: ClientError) -> Refused:
    return Refused(status_of(error.code), error.message, code=error.code)


# --- the run's events, as what a client is sent --------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Waiting:
    """Nothing new: the run waits for a person's decision (`tools`), or is still working (no tools)."""

    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class Done:
    finish: str  # OpenAI's finish_reason
    usage: dict[str, Any] | None


@dataclass(frozen=True)
class Failed:
    refused: Refused


Piece = Text | Waiting | Done | Failed


async def answer(following: Following, thread: Thread, run_id: int) -> AsyncIterator[Piece]:
    """The run's answer as it streams: its text, a Waiting every AGENTWEB_SSE_KEEPALIVE seconds without any, and its
    end. While a tool call waits for approval, for at most AGENTWEB_API_APPROVAL_TIMEOUT seconds: then Failed,
    naming the thread (the run itself waits on, as any run does)."""
    keepalive = settings.AGENTWEB_SSE_KEEPALIVE
    loop_time = asyncio.get_running_loop().time
    waiting_since: float | None = None
    awaiting: dict[str, str] = {}  # tool call id → name, of calls waiting for a decision
    names: dict[str, str] = {}
    while True:
        sent = await following.next(keepalive)
        if sent is None:
            if waiting_since is not None and loop_time() - waiting_since >= settings.AGENTWEB_API_APPROVAL_TIMEOUT:
                yield Failed(approval_timeout(thread, awaiting))
                return
            yield Waiting(tuple(awaiting.values()))
            continue
        event = sent.event
        if sent.type == "message.delta":
            yield Text(event["text"])
        elif sent.type == "tool_call.started":
            call = event["tool_call"]
            names[call["id"]] = call["name"]
        elif sent.type == "tool_call.awaiting_approval":
            awaiting[event["tool_call"]] = names.get(event["tool_call"], "a tool")
            if waiting_since is None:
                waiting_since = loop_time()
        elif sent.type == "tool_call.decided":
            awaiting.pop(event["tool_call"], None)
            if not awaiting:
                waiting_since = None
        elif sent.type in ("run.completed", "run.failed", "run.cancelled") and event.get("run") == run_id:
            yield _end(sent.type, event, thread)
            return


def _end(kind: str, event: dict[str, Any], thread: Thread) -> Piece:
    if kind == "run.completed":
        totals = event.get("usage") or None
        return Done("length" if event.get("reason") == "max_steps" else "stop", usage_of(totals))
    if kind == "run.cancelled":
        message = f"The run was stopped in the chat (thread {thread.pk})."
        return Failed(Refused(409, message, code="run_cancelled", kind="server_error"))
    message = f"The run failed: {event.get('error', '')} (thread {thread.pk})."
    return Failed(Refused(502, message, code="run_failed", kind="server_error"))


def approval_timeout(thread: Thread, awaiting: dict[str, str]) -> Refused:
    tools = ", ".join(sorted(set(awaiting.values()))) or "a tool call"
    return Refused(
        504,
        f"{tools} still waits for approval in thread {thread.pk} (decide it in the chat; the run waits on).",
        code="approval_timeout",
        kind="server_error",
    )
