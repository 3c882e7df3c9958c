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

import asyncio
import inspect
import logging
import os
import socket
import sys
import time

from autobahn.websocket.protocol import PreparedMessage
from daphne.cli import CommandLineInterface
from daphne.server import Server
from daphne.ws_protocol import WebSocketProtocol
from twisted.internet import defer
from twisted.internet.interfaces import ISSLTransport, ISystemHandle
from twisted.internet.protocol import connectionDone
from twisted.python.failure import Failure
from twisted.web.http import HTTPChannel

from agentweb.heap import HeapFreezer
from agentweb.http_channel import AppHTTPChannel
from agentweb.request_limits import RequestLimits
from agentweb.tuning import tune_process
from delivery.take_now import SEND_NOW

logger = logging.getLogger("daphne.server")  # Daphne's own logger: its messages keep their name

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


class AppWebSocketProtocol(WebSocketProtocol):
    """Daphne's websocket protocol, whose size limit holds for what it receives only."""

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
        if self.state != self.STATE_OPEN:
            return False
        details = self.server.connections.get(self)
        if details is None or details.get("disconnected"):
            return False
        if len(texts) == 1 or self.websocket_extensions_in_use:  # (compressed, each message is framed on its own)
            for text in texts:
                self.sendPreparedMessage(self.server.frame_of(text))
        elif texts:
            prepare = self.factory.prepareMessage
            self.sendData(b"".join(prepare(text.encode("utf8")).payloadHybi for text in texts))
        return True

    def connectionMade(self) -> None:
        handle = self.transport.getHandle() if ISystemHandle.providedBy(self.transport) else None
        if isinstance(handle, socket.socket) and not ISSLTransport.providedBy(self.transport):
            self.system_socket = handle  # (under TLS the handle is the TLS connection; Twisted writes everything)
        super().connectionMade()
        channel = getattr(self.transport, "producer", None)
        if isinstance(channel, HTTPChannel):
            from twisted.internet import reactor

            reactor.callLater(0, forget_handshake_request, channel)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        super().connectionLost(reason)
        # autobahn resolves `is_closed` with the protocol itself, and the fired Deferred keeps its result: protocol and
        # Deferred then point at each other, and with them everything the socket held (~30 objects: its queue, its
        # validators, its traffic stats) waited for a full collection (docs/performance.md, P20). Whoever waited on it
        # has been called by now; nothing in Daphne or agentweb reads it later.
        self.is_closed = defer.succeed(None)

    # autobahn's dataReceived and sendData build a debug line's arguments (colours from click included) for every
    # chunk read and every frame written, whether debug logging is on or not: ~8 µs each (measured), paid per token
    # frame and per ping. These two do what autobahn's do, less that line.

    def dataReceived(self, data: bytes) -> None:
        self._dataReceived(data)

    def sendData(self, data: bytes, sync: bool = False, chopsize: int | None = None) -> None:
        if sync or chopsize or self.send_queue or self.logOctets:
            self.system_socket = None  # Twisted's buffer may hold what autobahn writes: it writes everything now
            super().sendData(data, sync, chopsize)  # the rare cases, autobahn's way
            return
        self.write_through(data)
        if self.state == self.STATE_OPEN:
            self.trafficStats.outgoingOctetsWireLevel += len(data)
        elif self.state == self.STATE_CONNECTING:
            self.trafficStats.preopenOutgoingOctetsWireLevel += len(data)

    #: The connection's socket while every byte written to it so far went out at once (none waits in Twisted's
    #: buffer); None once Twisted has had to keep some, or for a connection that is not a plain socket (TLS).
    system_socket: socket.socket | None = None

    def write_through(self, data: bytes) -> None:
        """`transport.write(data)`, sent at once while Twisted holds nothing for this socket.

        Twisted's write keeps the bytes and asks the event loop to say when the socket can take them (an epoll_ctl),
        sends them at the loop's next turn, then stops asking (another): for every frame of every socket. A third of
        a Daphne process's loop went there in the reconnect storm's profile (docs/performance.md, P26). Here the
        bytes go to the socket straight away; what it cannot take (its buffer full: a tab far behind, or gone) goes
        to Twisted's write, and so does everything after it, for good, so that nothing overtakes what Twisted keeps.
        Every byte autobahn writes comes through sendData (the handshake's response included), so until then
        Twisted's buffer is empty."""
        handle = self.system_socket
        if handle is not None and self.transport.connected:
            try:
                sent = handle.send(data)
            except OSError:  # its buffer full (EAGAIN), or the connection broken: Twisted's write finds out its way
                sent = 0
            if sent == len(data):
                return
            data = data[sent:]
            self.system_socket = None
        self.transport.write(data)


def forget_handshake_request(channel: HTTPChannel) -> None:
    """Let go of the HTTP request that carried a socket's handshake, now that Daphne has upgraded it.

    Twisted's HTTP channel stays the connection's producer for the socket's whole life, and it and its request
    point at each other: the request (its headers, its body's buffer, its addresses: ~24 objects) was kept as long
    as the socket, then left as a reference cycle that only a full collection frees: every socket that closed
    left one (docs/performance.md, P19). Called at the next turn of the loop: Daphne still uses the request's
    channel once the websocket protocol is connected."""
    for request in channel.requests:
        request.channel = None
    channel.requests = []


def with_factory_options(protocol: type, factory) -> type:
    """`protocol` with the factory's options as attributes of its class, leaving autobahn none to copy.

    autobahn copies its ~50 options from the factory onto every connection it makes and formats them all into a
    debug line (pprint.pformat), logged or not: about 1 ms of CPU for each socket opened, 5 % of a Daphne process's
    loop in the reconnect storm's profile. The options are set once, before the first connection (Daphne's and
    ours in AppServer.run), so reading them from the class is the same as from a copy."""
    options = {name: getattr(factory, name) for name in protocol.CONFIG_ATTRS}
    # An option that is a function (perMessageCompressionAccept) must not become a method of the class.
    options = {name: staticmethod(v) if inspect.isfunction(v) else v for name, v in options.items()}
    return type(protocol.__name__, (protocol,), {**options, "CONFIG_ATTRS": ()})


class AppServer(Server):
    """Daphne's server with AppWebSocketProtocol, a close frame (1009) for a message over the limit, its timeout
    checks spread out, its consumers reaped by event rather than by a walk over every connection, what full
    collections keep frozen (agentweb/heap.py), the process tuned (agentweb/tuning.py) once the app is loaded, a
    websocket's scope carrying `send_now` (SEND_NOW), and HTTP requests read by AppHTTPChannel (a body over its
    route's limit refused before it is read, a request too slow to arrive closed)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.request_limits = RequestLimits.from_settings()
        self.freezer = HeapFreezer()
        self.last_frame: tuple[str | None, PreparedMessage | None] = (None, None)

    def frame_of(self, text: str) -> PreparedMessage:
        """`text`'s websocket frame: made again only when the text is another (not merely equal) string."""
        last_text, frame = self.last_frame
        if text is not last_text or frame is None:
            frame = self.ws_factory.prepareMessage(text.encode("utf8"))
            self.last_frame = (text, frame)
        return frame

    #: Daphne checks every connection's timeouts (and sends its pings) every 2 s in one turn of the event loop. With
    #: 5,000 sockets that turn took ~65 ms, and as sockets opened together are pinged together, every socket's ping
    #: went out in it: a token relayed meanwhile waited. Here each tick checks one slice, so a turn holds a tenth of
    #: it and the pings spread out; and each connection is checked every TIMEOUT_CHECK_S rather than every 2 s (a
    #: quarter of the idle process's CPU went to those checks), so a silent socket is pinged 30 to 35 s after its last
    #: frame, and a handshake the app never answers is refused 5 to 10 s after it began.
    TIMEOUT_SLICES = 10
    TIMEOUT_CHECK_S = 5

    def timeout_checker(self):
        from twisted.internet import reactor

        tick = getattr(self, "timeout_tick", 0)
        self.timeout_tick = (tick + 1) % self.TIMEOUT_SLICES
        for protocol in list(self.connections)[tick :: self.TIMEOUT_SLICES]:
            protocol.check_timeouts()
        reactor.callLater(self.TIMEOUT_CHECK_S / self.TIMEOUT_SLICES, self.timeout_checker)

    #: Daphne walks every connection each second to reap the consumers that finished and to cancel those still
    #: running 10 s after their socket closed (`application_checker`): with 5,000 idle sockets that walk was a fifth
    #: of the process's idle CPU. Here a consumer is reaped when it finishes and its socket when it closes, each by
    #: an event of its own; the walk stays as a safety net, every REAP_SWEEP_S.
    REAP_SWEEP_S = 10

    def create_application(self, protocol, scope):
        if isinstance(protocol, AppWebSocketProtocol):
            scope["extensions"] = {**scope.get("extensions", {}), SEND_NOW: protocol.send_text_now}
        queue = super().create_application(protocol, scope)
        instance = self.connections.get(protocol, {}).get("application_instance")
        if instance is not None:
            instance.add_done_callback(lambda _: self.reap(protocol))
        return queue

    def protocol_disconnected(self, protocol):
        from twisted.internet import reactor

        super().protocol_disconnected(protocol)
        self.reap(protocol)
        if protocol in self.connections:  # its consumer still runs: cancelled if it has not finished in time
            reactor.callLater(self.application_close_timeout + 0.1, self.reap, protocol)

    def application_checker(self):
        from twisted.internet import reactor

        for protocol in list(self.connections):
            self.reap(protocol)
        reactor.callLater(self.REAP_SWEEP_S, self.application_checker)

    def reap(self, protocol) -> None:
        """Daphne's `application_checker` for one connection: a consumer still running `application_close_timeout`
        after its socket closed is cancelled; one that finished is forgotten, its error logged (and its socket
        closed with an error if still open); a connection whose socket closed and consumer finished is removed."""
        details = self.connections.get(protocol)
        if details is None:
            return
        disconnected = details.get("disconnected")
        instance = details.get("application_instance")
        overdue = disconnected and time.time() - disconnected > self.application_close_timeout
        if overdue and instance is not None and not instance.done():
            logger.warning(
                "Application instance %r for connection %s took too long to shut down and was killed.",
                instance,
                repr(protocol),
            )
            instance.cancel()  # its done callback reaps it
            return
        if instance is not None and instance.done():
            del details["application_instance"]
            self.report_failure(protocol, instance, still_open=not disconnected)
            instance = None
        if instance is None and disconnected:
            del self.connections[protocol]

    def report_failure(self, protocol, instance: asyncio.Future, still_open: bool) -> None:
        """What Daphne does with a consumer that raised: logged, and its socket closed with an error if still open
        (a KeyboardInterrupt stops the server, as Daphne's own tests expect)."""
        if instance.cancelled() or instance.exception() is None:
            return
        error = instance.exception()
        if isinstance(error, KeyboardInterrupt):
            self.stop()
            return
        logger.error("Exception inside application: %s", error, exc_info=error)
        if still_open:
            protocol.handle_exception(error)

    #: How often a full collection's survivors are looked for, to be frozen (agentweb/heap.py).
    HEAP_CHECK_S = 1

    def heap_checker(self):
        from twisted.internet import reactor

        self.freezer.check()
        reactor.callLater(self.HEAP_CHECK_S, self.heap_checker)

    def run(self):
        # Daphne makes its websocket factory inside run(); ready_callable is called once it exists, before the
        # first connection is accepted (each connection copies the factory's options when it is made).
        ready = self.ready_callable

        def configure() -> None:
            self.http_factory.protocol = AppHTTPChannel.build  # (the factory is listening, nothing accepted yet)
            self.ws_factory.setProtocolOptions(failByDrop=False)
            self.ws_factory.protocol = with_factory_options(AppWebSocketProtocol, self.ws_factory)
            tune_process()  # the app is loaded by now (agentweb/tuning.py)
            self.heap_checker()
            start_mcp_servers()
            if ready is not None:
                ready()

        self.ready_callable = configure
        super().run()


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
