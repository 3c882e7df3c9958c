"""The websocket endpoint /ws/chat/ (docs/protocol.md). Thin: check the frame, call chat/runs/, forward events."""

from __future__ import annotations

import contextlib
import json
import logging
import uuid

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.utils.translation import gettext_noop

from audit.recording import socket_ip
from delivery import REDIS_GONE, group_name, person_group
from delivery.dispatch import ReceivesInBatches
from delivery.take_now import SEND_NOW
from languages.phrases import Phrase
from languages.sockets import said_in, socket_language

from . import live, rewind, runs
from .access import current_user, get_thread_for_user
from .error_codes import REFUSED, client_error
from .frames import ClientError, frame_ref, parse_frame
from .live import events
from .ratelimit import send_limit
from .signed_in import read_signed_in_thread
from .socket_cap import TOO_MANY_SOCKETS, sockets
from .text import unstorable_message, unstorable_text

UNAUTHENTICATED = 4401
#: The page's keep-alive frame exactly as static/chat/socket.js sends it, and its answer.
PING_FRAME = json.dumps({"type": "ping"}, separators=(",", ":"))
PONG_TEXT = json.dumps({"type": events.pong()[0], **events.pong()[1]})
#: Close code of a socket opened while Redis is out of reach (1013, "try again later", is not one a server may send
#: through Daphne): the page reconnects, as after any other close.
TRY_AGAIN_LATER = 4503
REDIS_UNAVAILABLE = gettext_noop("The server cannot reach Redis right now; try again in a moment.")
log = logging.getLogger("agentweb.sockets")


class ChatConsumer(ReceivesInBatches, AsyncWebsocketConsumer):
    # ReceivesInBatches: a socket behind its stream takes its backlog in one wake-up (delivery/dispatch.py), and an
    # idle one is handed its thread's events by the channel layer (take_now).

    #: The server's send of a text frame, at once (delivery/take_now.py's SEND_NOW); None under another server.
    send_now = None

    async def connect(self):
        self.groups_joined: set[str] = set()
        # Per thread, the last seq a subscribe sent: events of the thread's group up to it were sent already.
        self.sent_up_to: dict[str, int] = {}
        self.send_now = self.scope.get("extensions", {}).get(SEND_NOW)
        # The page's language: the `error` messages a person reads are said in it (languages/sockets.py).
        self.language = socket_language(self.scope)
        await self.accept()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=UNAUTHENTICATED)
            return
        if not sockets().open(user.pk, settings.AGENTWEB_MAX_SOCKETS_PER_USER):
            await self.close(code=TOO_MANY_SOCKETS)
            return
        self.counted_for = user.pk
        try:
            await self.join(person_group(user.pk))
        except REDIS_GONE as gone:
            log.warning("a chat socket was closed as it opened: the server cannot reach Redis (%s)", gone)
            await self.close(code=TRY_AGAIN_LATER)

    async def __call__(self, scope, receive, send):
        try:
            await super().__call__(scope, receive, send)
        finally:  # however the consumer ends (a disconnect, a cancelled task), its socket is no longer counted
            self.uncount()

    def said(self, text: str) -> str:
        return said_in(getattr(self, "language", settings.LANGUAGE_CODE), text)

    def uncount(self) -> None:
        counted_for = getattr(self, "counted_for", None)
        if counted_for is not None:
            self.counted_for = None
            sockets().close(counted_for)

    async def disconnect(self, code):
        self.uncount()
        for group in getattr(self, "groups_joined", ()):
            await live.delivery().detach(self.channel_name, group)

    async def receive(self, text_data=None, bytes_data=None):
        if not self.scope["user"].is_authenticated:
            return
        frame = None
        try:
            frame = parse_frame(text_data, max_bytes=settings.AGENTWEB_MAX_FRAME_BYTES)
            refuse_unstorable_text(frame)
            if frame["type"] not in self.checks_own_session and not await self.still_signed_in():
                await self.close(code=UNAUTHENTICATED)
                return
            try:
                await self.handlers[frame["type"]](self, frame)
            except runs.SignedOut:  # found while the frame was handled (its handler checks the session itself)
                await self.close(code=UNAUTHENTICATED)
            except REFUSED as refused:  # the run layer's refusals, each told as chat/error_codes.py's table says
                raise client_error(refused, frame) from None
        except ClientError as error:
            await self.send_event(events.error(error.code, self.said(error.message), frame_ref(text_data)))
        except REDIS_GONE as gone:
            # Redis restarting or out of reach (its traceback says nothing more): the tab is told, its socket stays.
            kind = frame["type"] if frame else "?"
            log.warning("a %s frame was refused: the server cannot reach Redis (%s)", kind, gone)
            await self.send_event(events.error("unavailable", self.said(REDIS_UNAVAILABLE), frame_ref(text_data)))

    async def dispatch(self, message):
        # channels closes stale database connections before every handler: a hop to the one database thread, queued
        # behind every other socket's. Every database call here is database_sync_to_async, which closes them itself
        # in its own hop, so that hop only delayed: 1,000 tabs reconnecting at once waited seconds in that queue.
        if message["type"] == "thread.event":
            # A thread's event (or a person's thread-list event), already serialised once by its sender: nearly
            # all a socket gets.
            text = self.event_text(message)
            if text is not None and not (self.send_now is not None and self.send_now(text)):
                # Straight to the server's send: AsyncWebsocketConsumer.send only builds this message.
                await self.base_send({"type": "websocket.send", "text": text})
            return
        if message["type"] == "websocket.receive" and message.get("text") == PING_FRAME:
            # The page's keep-alive, from every open tab every 25 s: answered here, without parsing it.
            await self.send(text_data=PONG_TEXT)
            return
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    def take_now(self, message: dict) -> bool:
        """The channel layer's offer of a message while this consumer is idle (delivery/take_now.py): a thread's
        event is sent now, as dispatch would send it, without waking the consumer's loop; anything else is queued."""
        if message["type"] != "thread.event" or self.send_now is None:
            return False
        text = self.event_text(message)
        return text is None or self.send_now(text)

    def event_text(self, message: dict) -> str | None:
        """The text of a thread's event to send this socket; None if a subscribe sent it already, or if it is for
        sockets that do not follow the thread it names (`unless_following`)."""
        if self.sent_up_to and self.sent_already(message["text"]):
            return None
        if message.get("unless_following") in self.groups_joined:
            return None
        return message["text"]

    def sent_already(self, text: str) -> bool:
        """An event that a subscribe sent (in its snapshot or its tail) before the group delivered it. Read only
        while a subscribe's events may still come in twice: until the first event past them."""
        event = json.loads(text)
        thread, seq = event.get("thread"), event.get("seq")
        if seq is None or thread not in self.sent_up_to:
            return False
        if seq <= self.sent_up_to[thread]:
            return True
        del self.sent_up_to[thread]
        return False

    async def send_texts(self, thread: str, texts: list[str]) -> None:
        """A subscribe's snapshot or tail; what the group delivers of them later is dropped (sent_already)."""
        if not texts:
            return
        self.sent_up_to[thread] = json.loads(texts[-1])["seq"]
        if self.send_now is not None and self.send_now(*texts):  # in one write (agentweb/serve.py)
            return
        for text in texts:
            await self.send(text_data=text)

    async def inbox_event(self, message):
        """`inbox.changed` for the person (chat/broadcast.py tell_inbox), to the sockets that asked for it
        (inbox.subscribe): not a thread's event, so it never rides the thread events' path."""
        if getattr(self, "follows_inbox", False):
            await self.send(text_data=message["text"])

    async def session_ended(self, message):
        """The person signed out (of this session, or everywhere) or was deactivated: this socket stops."""
        session = self.scope.get("session")
        if message.get("session") in (None, getattr(session, "session_key", None)):
            await self.close(code=UNAUTHENTICATED)

    async def send_event(self, event: events.Event) -> None:
        """An answer to this socket's frame (chat/live/events.py)."""
        type_, fields = event
        await self.send(text_data=json.dumps({"type": type_, **fields}))

    # --- frame handlers ---------------------------------------------------------------

    async def ping(self, frame):
        await self.send_event(events.pong())

    async def inbox_subscribe(self, frame):
        """inbox.subscribe: this socket is told when the person's approvals inbox changes (inbox.changed)."""
        self.follows_inbox = True

    async def subscribe(self, frame):
        # One trip to the database thread, the session's check included, shared with the other sockets subscribing
        # at that moment: in a reconnect storm a tab's wait is mostly that thread's queue (chat/signed_in.py).
        user, thread = await read_signed_in_thread(self.session_key(), self.scope["user"], frame["thread"])
        self.scope["user"] = user
        # Follow first, then read: an event published in between reaches this socket through the group as well
        # as in what is read, and is dropped the second time (sent_already); none is lost.
        await self.follow(thread.pk)
        if "paged" in frame:  # kept for the snapshots this socket is sent unasked (a replayed frame's)
            self.paged = frame["paged"]
        texts = await runs.subscribe_texts(thread, frame.get("after_seq"), paged=getattr(self, "paged", False))
        await self.send_texts(str(thread.pk), texts)

    async def send_message(self, frame):
        # The session is checked in the trip to the database thread that opens the turn (runs.begin_turn); a frame
        # refused before it checks it first, as every other frame does.
        self.refuse_while_redis_is_gone()  # first: the send limit's bucket is in Redis too
        try:
            await self.take_send_token()
            content, client_msg_id = message_fields(frame)
        except ClientError:
            if not await self.still_signed_in():
                await self.close(code=UNAUTHENTICATED)
                return
            raise
        turn, setup = await runs.begin_turn(
            user=self.scope["user"],
            session_key=self.session_key(),
            thread_id=frame.get("thread"),
            content=content,
            client_msg_id=client_msg_id,
            model=frame.get("model"),
            agent=frame.get("agent"),
            attachments=frame.get("attachments") or None,
            disabled_tools=frame.get("disabled_tools") or None,
        )
        async with self.launching(turn):
            await self.follow(turn.thread.pk)
            if turn.run is None:  # a replayed frame: the message is stored already, show where things stand
                await self.subscribe({"thread": str(turn.thread.pk)})
                return
            await runs.launch_run(turn, setup=setup)

    async def set_model(self, frame):
        await runs.set_model(user=self.scope["user"], thread_id=frame["thread"], model=frame["model"])

    async def set_tool(self, frame):
        """thread.set_tool: a tool turned on or off for this chat (chat/store/thread_tools.py)."""
        await runs.set_tool(
            user=self.scope["user"], thread_id=frame["thread"], tool=frame["tool"], enabled=frame["enabled"]
        )

    async def cancel(self, frame):
        thread = await self.get_thread(frame["thread"])
        if not await runs.cancel(thread.pk):
            raise ClientError("no_active_run", gettext_noop("This thread has no running answer to stop."))

    async def decide(self, frame):
        # The decision that completes a paused step resumes the run (a model request): it takes a send token, given
        # back when the decision resumed nothing (another call still waits, or it was refused).
        await self.take_send_token()
        resumed = False
        try:
            resumed = await runs.decide(
                user=self.scope["user"],
                tool_call_id=frame["tool_call"],
                decision=frame["decision"],
                args=frame.get("args"),
                message=frame.get("message", ""),
                for_thread=frame.get("for_thread", False),
                ip=socket_ip(self.scope),
            )
        finally:
            if not resumed:
                await send_limit().agive_back(self.scope["user"].pk)

    async def answer_input(self, frame):
        """tool_call.input: a person's answer to a running tool's request for input (chat/runs/interaction.py)."""
        thread = await self.get_thread(frame["thread"])
        await runs.answer_input(
            thread=thread,
            user=self.scope["user"],
            tool_call=frame["tool_call"],
            request=frame["request"],
            action=frame["action"],
            content=frame.get("content"),
            reply_to=self.channel_name,
            ref=frame.get("ref"),
        )

    async def input_refused(self, message):
        """The process running the run refused an answer this socket sent (answer_input)."""
        said = self.said(Phrase.from_data(message.get("phrase"), message["message"]))
        await self.send_event(events.error(message["code"], said, message.get("ref")))

    async def retry(self, frame):
        await self.follow_up(frame, "retry")

    async def continue_run(self, frame):
        await self.follow_up(frame, "continue", steps=frame.get("steps"))

    async def follow_up(self, frame, kind: str, steps: int | None = None):
        self.refuse_while_redis_is_gone()
        await self.take_send_token()  # Stop then Retry, over and over, is as many model requests
        turn = await runs.begin_followup(user=self.scope["user"], thread_id=frame["thread"], kind=kind, steps=steps)
        async with self.launching(turn):
            await self.follow(turn.thread.pk)
            await runs.launch_run(turn)

    async def regenerate(self, frame):
        await self.change_branch(frame, rewind.begin_regenerate(user=self.scope["user"], thread_id=frame["thread"]))

    async def edit_last(self, frame):
        await self.edit_message(frame, message_id=None)

    async def edit(self, frame):
        await self.edit_message(frame, message_id=frame["message"])

    async def edit_message(self, frame, *, message_id):
        """message.edit, and message.edit_last (its last user message): a new version of it (chat/rewind.py)."""
        content, client_msg_id = message_fields(frame)
        edited = rewind.begin_edit(
            user=self.scope["user"],
            thread_id=frame["thread"],
            message_id=message_id,
            content=content,
            client_msg_id=client_msg_id,
        )
        await self.change_branch(frame, edited)

    async def switch_version(self, frame):
        switched = rewind.begin_switch(
            user=self.scope["user"], thread_id=frame["thread"], message_id=frame["message"], to=frame["to"]
        )
        await self.change_branch(frame, switched, starts_run=False)

    async def change_branch(self, frame, change, *, starts_run: bool = True):
        """Regenerate, edit and switch: await `change` (a coroutine of chat/rewind.py), then launch its run."""
        try:
            self.refuse_while_redis_is_gone()
            if starts_run:
                await self.take_send_token()
        except (ClientError, *REDIS_GONE):
            change.close()
            raise
        turn = await change
        async with self.launching(turn):
            await self.follow(turn.thread.pk)
            if turn.run is None:
                if starts_run:  # a replayed edit: already done
                    await self.subscribe({"thread": str(turn.thread.pk)})
                return
            await runs.launch_run(turn)

    handlers = {
        "ping": ping,
        "inbox.subscribe": inbox_subscribe,
        "thread.subscribe": subscribe,
        "message.send": send_message,
        "thread.set_model": set_model,
        "thread.set_tool": set_tool,
        "run.cancel": cancel,
        "run.retry": retry,
        "run.continue": continue_run,
        "run.regenerate": regenerate,
        "message.edit_last": edit_last,
        "message.edit": edit,
        "message.switch_version": switch_version,
        "tool_call.decide": decide,
        "tool_call.input": answer_input,
    }

    # --- helpers ----------------------------------------------------------------------

    # Frames whose handler checks the session itself (message.send: in the trip that opens the turn;
    # thread.subscribe: in the trip that reads the thread), or need no check (a ping only keeps the socket open).
    checks_own_session = frozenset({"ping", "message.send", "thread.subscribe"})

    async def take_send_token(self) -> None:
        """Every frame that makes a model request takes a token of the person's send limit (chat/ratelimit.py)."""
        if not await send_limit().aallow(self.scope["user"].pk):
            raise ClientError("rate_limited", gettext_noop("Too many messages at once; wait a moment and send again."))

    def refuse_while_redis_is_gone(self) -> None:
        """Before a frame writes what only Redis can then announce and hand on (a message, a run): while this
        process's reader finds Redis out of reach, nothing is written, and the page keeps the message to send again."""
        if not live.delivery().reachable:
            raise REDIS_GONE[0]("this process's reader finds Redis out of reach")

    @contextlib.asynccontextmanager
    async def launching(self, turn):
        """Following and starting a turn already written: should Redis go out of reach just then, its run fails
        (and can be retried) rather than stay running, never handed on, until the stale limit."""
        try:
            yield
        except REDIS_GONE:
            await runs.fail_unlaunched(turn, REDIS_UNAVAILABLE)
            raise

    def session_key(self) -> str | None:
        return getattr(self.scope.get("session"), "session_key", None)

    async def still_signed_in(self) -> bool:
        """Re-read per action: a socket opened before a logout or a deactivation stops working."""
        user = await database_sync_to_async(current_user)(self.session_key())
        if user is None or user.pk != self.scope["user"].pk:
            return False
        self.scope["user"] = user
        return True

    async def get_thread(self, thread_id):
        return await database_sync_to_async(get_thread_for_user)(self.scope["user"], thread_id)

    async def follow(self, thread_id) -> None:
        await self.join(group_name(thread_id))

    async def join(self, group: str) -> None:
        if group not in self.groups_joined:
            await live.delivery().attach(self.channel_name, group)
            self.groups_joined.add(group)


def message_fields(frame: dict) -> tuple[str, uuid.UUID]:
    """The text and the client_msg_id of a frame that carries a person's message, checked."""
    content = frame["content"].strip()
    if not content and not frame.get("attachments"):  # files alone make a message (message.send)
        raise ClientError("bad_frame", gettext_noop("content: the message is empty."))
    try:
        return content, uuid.UUID(frame["client_msg_id"])
    except ValueError:
        raise ClientError("bad_frame", "client_msg_id: must be a UUID.") from None


def refuse_unstorable_text(frame: dict) -> None:
    """Every text of a frame can be stored, or nothing is done (chat/text.py)."""
    where = unstorable_text(frame)
    if where is not None:
        raise ClientError("bad_frame", unstorable_message(where))
