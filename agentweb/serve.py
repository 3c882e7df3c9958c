"""Daphne as agentweb needs it: `python -m agentweb.serve [daphne's options] agentweb.asgi:application`.

What a client sends is limited to AGENTWEB_MAX_FRAME_BYTES (256 KiB) as it arrives. autobahn, Daphne's websocket
layer, adds up the lengths that a message's frames announce before it reads each one, so a message over the limit,
in one frame or in a thousand small fragments, is refused before it is buffered (Daphne's own limit, 1 MiB, let a
client make the server hold that much per socket, and agentweb's earlier 64 MiB far more). The refusal is a close
frame with code 1009 (message too big): autobahn's default is to drop the connection without one.

What the app sends is not limited that way, though autobahn holds it to the same `maxMessagePayloadSize` (Daphne
has no separate option for it): a thread's snapshot carries the whole conversation and `message.completed` a whole
answer, and a long thread could then never be opened again. Those go out through autobahn's frame-by-frame
sending, which does not apply the limit for received messages.
"""

from __future__ import annotations

import os
import sys

from autobahn.websocket.protocol import PreparedMessage
from daphne.cli import CommandLineInterface
from daphne.ws_protocol import WebSocketProtocol

from agentweb.adapters.autobahn import DirectIO
from agentweb.adapters.daphne import ReapingServer, has_open_consumer
from agentweb.adapters.twisted import forget_handshake_request, handshake_channel
from agentweb.heap import HeapFreezer
from agentweb.http_channel import AppHTTPChannel
from agentweb.request_limits import RequestLimits
from agentweb.tuning import tune_process
from delivery.take_now import SEND_NOW

LIMIT_OPTIONS = ("--websocket-max-message-size", "--websocket-max-frame-size")
#: Seconds a socket may be silent before Daphne pings it. The page sends its own ping every 25 s
#: (static/chat/socket.js), and any frame from a socket puts off Daphne's ping, so a tab that is there is never
#: pinged by the server as well (at Daphne's 20 s it was, every time: two keep-alives per socket). A socket that
#: went silent is still pinged, and closed when it does not answer (`--ping-timeout`, 30 s).
PING_INTERVAL_S = 30


def daphne_arguments(argv: list[str], max_incoming_bytes: int) -> list[str]:
    """`argv`, with agentweb's limit on received messages and frames and its ping interval unless given."""
    defaults: list[str] = []
    for option in LIMIT_OPTIONS:
        if not any(arg.startswith(option) for arg in argv):
            defaults += [option, str(max_incoming_bytes)]
    if not any(arg.startswith("--ping-interval") for arg in argv):
        defaults += ["--ping-interval", str(PING_INTERVAL_S)]
    return [*defaults, *argv]


class AppWebSocketProtocol(DirectIO, WebSocketProtocol):
    """Daphne's websocket protocol, whose size limit holds for what it receives only, reading and writing without
    autobahn's debug line (agentweb/adapters/autobahn.py), and letting go of its handshake's HTTP request."""

    def sendMessage(self, payload, isBinary=False, fragmentSize=None, sync=False, doNotCompress=False):
        if 0 < self.maxMessagePayloadSize < len(payload):
            # The same single message on the wire; autobahn's streaming API does not check it against the limit.
            self.beginMessage(isBinary=isBinary, doNotCompress=doNotCompress)
            self.sendMessageFrame(payload, sync=sync)
            self.endMessage()
            return
        super().sendMessage(payload, isBinary, fragmentSize, sync, doNotCompress)

    def send_text_now(self, *texts: str) -> bool:
        """Daphne's reply {"type": "websocket.send", "text": text} for each of `texts`, written at once rather than by
        the await of Daphne's send coroutine; False, and nothing sent, unless the socket is open and its consumer's
        (then the replies go Daphne's way, which knows what to do with them).

        A thread's event goes to every socket of the process that follows the thread, one after the other (see
        delivery/take_now.py): its frame is made once for all of them (server frames are not masked), not once per
        socket by autobahn's sendMessage. Several texts (a resuming tab's missed events) go out in one write."""
        if self.state != self.STATE_OPEN or not has_open_consumer(self.server, self):
            return False
        if len(texts) == 1 or self.websocket_extensions_in_use:  # (compressed, each message is framed on its own)
            for text in texts:
                self.sendPreparedMessage(self.server.frame_of(text))
        elif texts:
            prepare = self.factory.prepareMessage
            self.sendData(b"".join(prepare(text.encode("utf8")).payloadHybi for text in texts))
        return True

    def connectionMade(self) -> None:
        super().connectionMade()
        channel = handshake_channel(self.transport)
        if channel is not None:
            from twisted.internet import reactor

            reactor.callLater(0, forget_handshake_request, channel)


class AppServer(ReapingServer):
    """Daphne's server with AppWebSocketProtocol, a close frame (1009) for a message over the limit, its timeout
    checks spread out and its consumers reaped by event (agentweb/adapters/daphne.py), what full collections keep
    frozen (agentweb/heap.py), the process tuned (agentweb/tuning.py) once the app is loaded, a websocket's scope
    carrying `send_now` (SEND_NOW), and HTTP requests read by AppHTTPChannel (a body over its route's limit refused
    before it is read, a request too slow to arrive closed)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.request_limits = RequestLimits.from_settings()
        self.freezer = HeapFreezer()
        self.last_frame: tuple[str | None, PreparedMessage | None] = (None, None)

    def frame_of(self, text: str) -> PreparedMessage:
        """`text`'s websocket frame: made again only when the text is another (not merely equal) string."""
        last_text, frame = self.last_frame
        if text is not last_text or frame is None:
            frame = self.prepare_frame(text.encode("utf8"))
            self.last_frame = (text, frame)
        return frame

    def create_application(self, protocol, scope):
        if isinstance(protocol, AppWebSocketProtocol):
            scope["extensions"] = {**scope.get("extensions", {}), SEND_NOW: protocol.send_text_now}
        return super().create_application(protocol, scope)

    #: How often a full collection's survivors are looked for, to be frozen (agentweb/heap.py).
    HEAP_CHECK_S = 1

    def heap_checker(self):
        from twisted.internet import reactor

        self.freezer.check()
        reactor.callLater(self.HEAP_CHECK_S, self.heap_checker)

    def factories_made(self, http_factory, ws_factory) -> None:
        http_factory.protocol = AppHTTPChannel.build  # (the factory is listening, nothing accepted yet)
        ws_factory.setProtocolOptions(failByDrop=False)
        ws_factory.protocol = AppWebSocketProtocol
        tune_process()  # the app is loaded by now (agentweb/tuning.py)
        self.heap_checker()
        start_mcp_servers()
        start_schedules(workers=False)


def start_schedules(*, workers: bool) -> None:
    """This process fires due schedules (schedules/ticker.py) if it is one that should: the run workers when
    AGENTWEB_RUN_WORKERS is on, else every Daphne process (their claims make each slot fire once among them). The
    same processes prune the audit log hourly (audit/retention.py)."""
    from django.apps import apps
    from django.conf import settings

    if workers != settings.AGENTWEB_RUN_WORKERS:
        return
    if apps.is_installed("schedules"):
        apps.get_app_config("schedules").ticker.start()
    if apps.is_installed("audit"):
        apps.get_app_config("audit").pruner.start()


def start_mcp_servers() -> None:
    """This process's MCP connections start connecting now, in the background (mcpservers/lifetime.py)."""
    from django.apps import apps

    if apps.is_installed("mcpservers"):
        from mcpservers.lifetime import start_in_background

        start_in_background()


class AppCommandLineInterface(CommandLineInterface):
    server_class = AppServer


def interrupt_runs_on_stop() -> None:
    """On a clean stop (SIGTERM, SIGINT) the runs streaming here write what they have and become interrupted before
    the process exits (chat.runs.interrupt_live_runs); Twisted waits for it before it stops the event loop."""
    import asyncio

    from twisted.internet import defer, reactor

    def interrupt():
        from chat.runs import interrupt_live_runs

        return defer.Deferred.fromFuture(asyncio.ensure_future(interrupt_live_runs()))

    reactor.addSystemEventTrigger("before", "shutdown", interrupt)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")
    from django.conf import settings

    argv = sys.argv[1:] if argv is None else argv
    interrupt_runs_on_stop()
    AppCommandLineInterface().run(daphne_arguments(argv, settings.AGENTWEB_MAX_FRAME_BYTES))


if __name__ == "__main__":
    main()
