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


def daphne_arguments(argv: list[str], max_incoming_bytes: int) -> list[str]:
    """`argv`, with agentweb's limit on received messages and frames unless one is given."""
    limits: list[str] = []
    for option in LIMIT_OPTIONS:
        if not any(arg.startswith(option) for arg in argv):
            limits += [option, str(max_incoming_bytes)]
    return [*limits, *argv]


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
    """Daphne's server with AppWebSocketProtocol, a close frame (1009) for a message over the limit, and the
    process tuned (agentweb/tuning.py) once the app is loaded."""

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
