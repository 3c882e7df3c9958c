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

from daphne.cli import CommandLineInterface
from daphne.server import Server
from daphne.ws_protocol import WebSocketProtocol

from agentweb.tuning import tune_process

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


class AppServer(Server):
    """Daphne's server with AppWebSocketProtocol, a close frame (1009) for a message over the limit, its timeout
    checks spread out, and the process tuned (agentweb/tuning.py) once the app is loaded."""

    #: Daphne checks every connection's timeouts (and sends its pings) every 2 s in one turn of the event loop. With
    #: 5,000 sockets that turn took ~65 ms, and as sockets opened together are pinged together, every socket's ping
    #: went out in it: a token relayed meanwhile waited. Here each tick checks one slice, so a turn holds a tenth of
    #: it and the pings spread over the 2 s; every connection is still checked every 2 s.
    TIMEOUT_SLICES = 10

    def timeout_checker(self):
        from twisted.internet import reactor

        tick = getattr(self, "timeout_tick", 0)
        self.timeout_tick = (tick + 1) % self.TIMEOUT_SLICES
        for protocol in list(self.connections)[tick :: self.TIMEOUT_SLICES]:
            protocol.check_timeouts()
        reactor.callLater(2 / self.TIMEOUT_SLICES, self.timeout_checker)

    def run(self):
        # Daphne makes its websocket factory inside run(); ready_callable is called once it exists, before the
        # first connection is accepted (each connection copies the factory's options when it is made).
        ready = self.ready_callable

        def configure() -> None:
            self.ws_factory.protocol = AppWebSocketProtocol
            self.ws_factory.setProtocolOptions(failByDrop=False)
            tune_process()  # the app is loaded by now (agentweb/tuning.py)
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
