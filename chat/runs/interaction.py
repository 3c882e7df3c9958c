"""Tools that talk back mid-call: progress on the card's status line, and requests for the person's input answered
with a form on the card (MCP's progress notifications and elicitation; any tool may use them through its
ToolContext).

Per run, a RunInteraction gives each running call its `report_progress` and `elicit` (tools/context.py):

- progress goes out as `tool_call.progress`, the first report at once, then at most one frame per call per
  AGENTWEB_PROGRESS_WINDOW, carrying the latest value; nothing is stored.
- a request for input goes out as `tool_call.input_requested` and waits for `tool_call.input` from any of the
  person's tabs (this process's sockets directly, others' through the run's group `run.<thread>`, as Stop does);
  the first answer wins and `tool_call.input_answered` closes the form in every tab. Unanswered after
  AGENTWEB_INPUT_TIMEOUT, or when the call ends or the run stops, the request is cancelled. The run's live view
  (chat/recorder.py) carries the open request, so a tab that loads meanwhile shows the form again.
"""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils.translation import gettext_noop

from delivery import run_group
from languages.phrases import Phrase
from providers.types import ToolCallRequest
from tools.context import ElicitationAnswer, ToolContext
from tools.elicitation import check_requested_schema, content_problems

from .. import live, notify
from ..broadcast import tell_inbox
from ..live import events
from ..live.views import InputRequestView, ProgressView
from ..models import OpenInputRequest, Thread, ToolCall
from ..recorder import RunRecorder
from ..text import storable, storable_value
from . import recovery
from .registry import runs_here

log = logging.getLogger("agentweb.runs")
db = database_sync_to_async

MAX_MESSAGE_CHARS = 4000  # a request's message
MAX_PROGRESS_MESSAGE_CHARS = 500
CONNECT_POLL = 1.0  # seconds between looks for the connection a person makes while a call waits for it
ACTIONS = ("accept", "decline", "cancel")


class InputRefused(Exception):
    """An answer that is not taken; the socket that sent it gets an `error` with this code and message."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


NOT_OPEN = gettext_noop("This request for input is no longer open (answered, cancelled, or its call has ended).")


@dataclass
class InputRequest:
    id: str
    tool_call: str  # the ToolCall's id, as events name it
    message: str
    schema: dict[str, Any]
    answer: asyncio.Future
    # "connect": the call waits for the person to connect their account to an MCP server (`connect`), not a form.
    kind: str = "input"

    def view(self) -> InputRequestView:
        """As a snapshot's tool call carries it (`input_request`)."""
        return {"request": self.id, "message": self.message, "schema": self.schema}


async def _tell_nothing(key: Hashable, value: Any) -> None:
    """A discarded LatestValue's send: what a call reports once its run has ended goes nowhere."""


class LatestValue:
    """Per key, the first value sent at once, then at most one per `window` seconds: the latest that arrived."""

    def __init__(self, send: Callable[[Hashable, Any], Any], *, window: float):
        self._send = send
        self._window = window
        self._last_sent: dict[Hashable, float] = {}
        self._pending: dict[Hashable, Any] = {}
        self._timers: dict[Hashable, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()

    async def push(self, key: Hashable, value: Any) -> None:
        if key in self._pending:  # a send is due: it takes this value instead
            self._pending[key] = value
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        last = self._last_sent.get(key)
        if last is None or now - last >= self._window:
            self._last_sent[key] = now
            await self._send(key, value)
            return
        self._pending[key] = value
        self._timers[key] = loop.call_at(last + self._window, self._due, key)

    def _due(self, key: Hashable) -> None:
        self._timers.pop(key, None)
        if key not in self._pending:
            return
        self._last_sent[key] = asyncio.get_running_loop().time()
        task = asyncio.ensure_future(self._send(key, self._pending.pop(key)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def forget(self, key: Hashable) -> None:
        """The key's stream has ended: what is pending is dropped."""
        self._pending.pop(key, None)
        self._last_sent.pop(key, None)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def close(self) -> None:
        for key in list(self._timers):
            self.forget(key)

    def discard(self) -> None:
        """Closed for good: nothing more is sent, and `send` is let go (the run's interaction holds this and `send` is
        its bound method: kept, the two and the run's recorder would wait in a reference cycle for a collection)."""
        self.close()
        self._send = _tell_nothing


class RunInteraction:
    """Progress and requests for input of one run's calls. Lives as long as the run's task, in its process."""

    def __init__(self, recorder: RunRecorder, *, progress_window: float, input_timeout: float | None):
        self.recorder = recorder
        self.input_timeout = input_timeout
        self.requests: dict[str, InputRequest] = {}
        self.progress = LatestValue(self._send_progress, window=progress_window)
        # The call being executed → its ToolCall's id (see tool_context).
        self._bound: dict[int, str] = {}

    # --- the tools' side ------------------------------------------------------------------

    def tool_context(self, base: Callable[[ToolCallRequest], ToolContext]) -> Callable[[ToolCallRequest], ToolContext]:
        """`base`'s context for a call, with the call's report_progress and elicit."""

        def context(call: ToolCallRequest) -> ToolContext:
            made = base(call)
            tool_call = self._bind(call)
            if tool_call is None:
                return made

            async def report_progress(progress: float, total: float | None = None, message: str | None = None):
                await self.report_progress(tool_call, progress, total, message)

            async def elicit(message: str, schema: dict) -> ElicitationAnswer:
                return await self.elicit(tool_call, message, schema)

            async def connect(server: str, mode: str, check: Callable[[], Awaitable[bool]]) -> bool:
                return await self.connect(tool_call, server, mode, check)

            return replace(made, report_progress=report_progress, elicit=elicit, connect=connect)

        return context

    def _bind(self, call: ToolCallRequest) -> str | None:
        """The running ToolCall the agent executes `call` for (matched by the model's call id; two calls of a step
        with the same id are bound one each)."""
        bound = set(self._bound.values())
        wanted = storable(call.id)
        for state in self.recorder.calls.values():
            key = str(state.id)
            if state.call_id == wanted and state.status == ToolCall.Status.RUNNING and key not in bound:
                self._bound[id(call)] = key
                return key
        return None

    async def call_ended(self, call: ToolCallRequest) -> None:
        """The call has returned (its result is told next): its progress stops, its open requests are cancelled."""
        tool_call = self._bound.pop(id(call), None)
        if tool_call is None:
            return
        self.progress.forget(tool_call)
        self.recorder.call_extras.pop(tool_call, None)
        for request in [r for r in self.requests.values() if r.tool_call == tool_call]:
            await self._close(request, ElicitationAnswer("cancel"), by=None)

    async def report_progress(
        self, tool_call: str, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        value: ProgressView = {
            "progress": _number("progress", progress),
            "total": None if total is None else _number("total", total),
            "message": None if message is None else storable(str(message))[:MAX_PROGRESS_MESSAGE_CHARS],
        }
        await self.progress.push(tool_call, value)

    async def _send_progress(self, tool_call: str, value: ProgressView) -> None:
        if not self._running(tool_call):
            return  # it ended meanwhile: its card shows the result, not a late progress
        await self.recorder.emit(events.tool_call_progress(tool_call, **value))
        if tool_call in self._bound.values():  # still running: a page loaded now shows it
            self.recorder.call_extras.setdefault(tool_call, {})["progress"] = value

    def _running(self, tool_call: str) -> bool:
        return any(str(c.id) == tool_call and c.status == ToolCall.Status.RUNNING for c in self.recorder.calls.values())

    async def elicit(self, tool_call: str, message: str, schema: dict) -> ElicitationAnswer:
        """Ask the person; the answer, or `cancel` when nobody answers in time, the call ends or the run stops."""
        schema = check_requested_schema(schema)  # InvalidRequest (a ValueError): the tool is told why
        if not self._running(tool_call):
            return ElicitationAnswer("cancel")
        request = InputRequest(
            id=uuid.uuid4().hex,
            tool_call=tool_call,
            message=storable(str(message))[:MAX_MESSAGE_CHARS],
            schema=storable_value(schema),
            answer=asyncio.get_running_loop().create_future(),
        )
        self.requests[request.id] = request
        # Listed for the approvals inbox first: a page told of it (below) finds it. The form is asked for in the
        # thread all the same if the row cannot be written.
        try:
            await db(_record_request)(self.recorder, request, self._tool_name(tool_call))
        except Exception:
            log.warning("request %s: not listed in the inbox", request.id, exc_info=True)
        await self.recorder.emit(
            events.tool_call_input_requested(tool_call, request.id, request.message, request.schema)
        )
        self.recorder.call_extras.setdefault(tool_call, {})["input_request"] = request.view()
        await tell_inbox(self.recorder.thread_id, "input_requested", [tool_call])
        name = next((c.name for c in self.recorder.calls.values() if str(c.id) == tool_call), "")
        notify.input_requested(
            self.recorder.thread_id, self.recorder.run_id, request.id, name, owner_id=self.recorder.owner_id
        )
        try:
            async with asyncio.timeout(self.input_timeout):
                # Shielded: a Stop cancels the wait, never the answer a closing request is given.
                return await asyncio.shield(request.answer)
        except TimeoutError:
            await self._close(request, ElicitationAnswer("cancel"), by=None)
            # Closed here, or by an answer that came in just before (its close sets the answer soon).
            return await asyncio.shield(request.answer)
        except asyncio.CancelledError:
            await asyncio.shield(self._close(request, ElicitationAnswer("cancel"), by=None))
            raise

    async def connect(self, tool_call: str, server: str, mode: str, check: Callable[[], Awaitable[bool]]) -> bool:
        """Ask the person to connect their account to MCP server `server` (the call's "Connect" card) and wait until
        `check()` says they have (the connection is made by a page, in any process: it is looked for every
        CONNECT_POLL seconds). False when they cancel, nobody connects in time, the call ends or the run stops."""
        if not self._running(tool_call):
            return False
        request = InputRequest(
            id=uuid.uuid4().hex,
            tool_call=tool_call,
            message=f"Connect your account to {server}",
            schema={},
            answer=asyncio.get_running_loop().create_future(),
            kind="connect",
        )
        self.requests[request.id] = request
        url = connect_url(server)
        await self.recorder.emit(events.tool_call_connect_requested(tool_call, request.id, server, mode, url))
        view = {"request": request.id, "server": server, "mode": mode, "url": url}
        self.recorder.call_extras.setdefault(tool_call, {})["connect_request"] = view  # type: ignore[typeddict-item]
        try:
            async with asyncio.timeout(self.input_timeout):
                while not request.answer.done():
                    if await check():
                        await self._close(request, ElicitationAnswer("accept"), by=None)
                        break
                    await asyncio.wait([asyncio.shield(request.answer)], timeout=CONNECT_POLL)
        except TimeoutError:
            await self._close(request, ElicitationAnswer("cancel"), by=None)
        except asyncio.CancelledError:
            await asyncio.shield(self._close(request, ElicitationAnswer("cancel"), by=None))
            raise
        return (await asyncio.shield(request.answer)).action == "accept"

    async def _close(self, request: InputRequest, answer: ElicitationAnswer, *, by: str | None) -> bool:
        """Close an open request with `answer` (False: it was closed already). Every tab is told, then the tool."""
        if self.requests.pop(request.id, None) is None:
            return False
        try:
            await self.recorder.emit(events.tool_call_input_answered(request.tool_call, request.id, answer.action, by))
        finally:
            extras = self.recorder.call_extras.get(request.tool_call)
            key = "connect_request" if request.kind == "connect" else "input_request"
            if extras is not None and extras.get(key, {}).get("request") == request.id:
                del extras[key]  # type: ignore[misc]
            if not request.answer.done():
                request.answer.set_result(answer)
            if request.kind == "input":  # a request to connect is not listed in the inbox
                await _forget_request(self.recorder.thread_id, request, by=by, action=answer.action)
        return True

    def _tool_name(self, tool_call: str) -> str:
        return next((c.name for c in self.recorder.calls.values() if str(c.id) == tool_call), "")

    # --- the person's side ----------------------------------------------------------------

    async def answer(self, *, tool_call: str, request: str, action: str, content: Any, by: str) -> None:
        """A person's answer (tool_call.input). The first one wins; InputRefused otherwise."""
        found = self.requests.get(request)
        if found is None or found.tool_call != tool_call:
            raise InputRefused("not_found", NOT_OPEN)
        if action not in ACTIONS:
            raise InputRefused(
                "bad_frame",
                Phrase(
                    gettext_noop("action: %(action)s is not one of accept, decline, cancel."),
                    action=repr(str(action)[:20]),
                ),
            )
        if found.kind == "connect" and action == "accept":
            raise InputRefused(
                "bad_frame", gettext_noop("A request to connect is accepted by connecting, on the page it links to.")
            )
        answer = ElicitationAnswer(action)
        if action == "accept":
            problems = content_problems(found.schema, content)
            if problems:
                # The problems are the schema checker's, in English.
                raise InputRefused(
                    "invalid_input",
                    Phrase(
                        gettext_noop("The answer does not fit the form: %(problems)s"), problems="; ".join(problems)
                    ),
                )
            answer = ElicitationAnswer("accept", content)
        if not await self._close(found, answer, by=by):
            raise InputRefused("not_found", NOT_OPEN)

    async def close(self) -> None:
        """The run stops (Stop, a failure, its end): open requests are cancelled, pending progress dropped."""
        self.progress.close()
        for request in list(self.requests.values()):
            await asyncio.shield(self._close(request, ElicitationAnswer("cancel"), by=None))

    def discard(self) -> None:
        """The run's task has ended: nothing is told any more; a request still waited on gets `cancel`. (A row left
        for the inbox is not shown once the run has ended: inbox/queries.py.)"""
        self.progress.discard()
        for request in self.requests.values():
            if not request.answer.done():
                request.answer.set_result(ElicitationAnswer("cancel"))
        self.requests.clear()


def _record_request(recorder: RunRecorder, request: InputRequest, tool_name: str) -> None:
    OpenInputRequest.objects.create(
        id=request.id,
        thread_id=recorder.thread_id,
        run_id=recorder.run_id,
        tool_call=request.tool_call,
        tool_name=tool_name[:128],
        message=request.message,
        schema=request.schema,
    )


async def _forget_request(thread_id: uuid.UUID, request: InputRequest, *, by: str | None, action: str) -> None:
    """The request closed: off the inbox, whose pages are told. Shielded by its callers' close."""
    try:
        await OpenInputRequest.objects.filter(pk=request.id).adelete()
    except Exception:  # the database went away: the row's run is no longer running once the run ends, so not shown
        log.warning("request %s: its inbox row could not be deleted", request.id, exc_info=True)
    await tell_inbox(thread_id, "input_closed", [request.tool_call], decision=action, by=by)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    return value


def connect_url(server: str) -> str:
    """The page where a person connects their account to MCP server `server` (the mcpconnect app's)."""
    from urllib.parse import urlencode

    from django.urls import NoReverseMatch, reverse

    try:
        return reverse("mcpconnect:connections") + "?" + urlencode({"server": server})
    except NoReverseMatch:
        return ""


def for_recorder(recorder: RunRecorder) -> RunInteraction:
    return RunInteraction(
        recorder, progress_window=settings.AGENTWEB_PROGRESS_WINDOW, input_timeout=settings.AGENTWEB_INPUT_TIMEOUT
    )


class InteractiveToolbox:
    """A toolbox (built with `interaction.tool_context(...)` as its context) whose calls' progress and requests
    for input end when the call returns, before its result is told."""

    def __init__(self, toolbox, interaction: RunInteraction):
        self.toolbox = toolbox
        self.interaction = interaction

    def definitions(self):
        return self.toolbox.definitions()

    def returns_direct(self, name: str) -> bool:
        return self.toolbox.returns_direct(name)

    async def execute(self, call: ToolCallRequest):
        try:
            return await self.toolbox.execute(call)
        finally:
            await self.interaction.call_ended(call)


# --- an answer, from whichever process's socket it reaches -------------------------------------


async def answer_input(
    *, thread: Thread, user, tool_call: str, request: str, action: str, content: Any, reply_to: str, ref: str | None
) -> None:
    """Route a person's answer to the run that waits for it: here, or through the run's group in the process that
    runs it (which tells `reply_to` if it refuses the answer). InputRefused for an answer refused here."""
    fields = {"tool_call": tool_call, "request": request, "action": action, "content": content}
    by = user.get_username()
    active = runs_here().active.get(thread.pk)
    if active is not None and active.interaction is not None:  # the run is here
        await active.interaction.answer(**fields, by=by)
        return
    live_run = await recovery.live_run(thread.pk)
    if live_run is None or not live_run.owner:
        raise InputRefused("not_found", NOT_OPEN)
    message = {"type": "run.input", "run": live_run.run_id, **fields, "by": by, "reply_to": reply_to, "ref": ref}
    await live.delivery().tell(run_group(thread.pk), message)


async def take_input(thread_id: uuid.UUID, run_id: int, message: dict[str, Any]) -> None:
    """An answer another process received for this process's run (its inbox, chat/runs/cancel.py)."""
    active = runs_here().active.get(thread_id)
    fields = {key: message.get(key) for key in ("tool_call", "request", "action", "content")}
    try:
        if active is None or active.run_id != run_id or active.interaction is None:
            raise InputRefused("not_found", NOT_OPEN)
        await active.interaction.answer(**fields, by=message.get("by") or "")
    except InputRefused as refused:
        if message.get("reply_to"):
            refusal = {
                "type": "input.refused",
                "code": refused.code,
                "message": str(refused.message),
                # Its template and values, so the socket says it in its page's language (languages/phrases.py).
                "phrase": refused.message.as_data() if isinstance(refused.message, Phrase) else None,
                "ref": message.get("ref"),
            }
            await live.delivery().send(message["reply_to"], refusal)
