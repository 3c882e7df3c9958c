"""What agentweb relies on inside Daphne's server (daphne.server.Server), pinned in requirements.txt and checked by
tests/agentweb/adapters/test_daphne.py.

`ReapingServer`, Daphne's server with its timers and its reaping over `Server.connections` done differently, and
hooks for agentweb/serve.py's AppServer (`factories_made`, `prepare_frame`); `has_open_consumer`, the check
agentweb's `send_now` makes before writing to a socket.

Buys (docs/performance.md, "Library reach-ins measured again", piece 1): a broadcast's p99 beside 5,000 idle
sockets (16 and 41 ms against 47 and 77 ms with Daphne's own), Daphne's check of every connection every 2 s no
longer held in one turn of the loop.
"""

from __future__ import annotations

import asyncio
import logging
import time

from autobahn.websocket.protocol import PreparedMessage
from daphne.server import Server

logger = logging.getLogger("daphne.server")  # Daphne's own logger: its messages keep their name


def has_open_consumer(server: Server, protocol) -> bool:
    """Whether `protocol`'s connection is known to the server, its socket not closed (what Daphne's send does)."""
    details = server.connections.get(protocol)
    return details is not None and not details.get("disconnected")


class ReapingServer(Server):
    """Daphne's server, its timeout checks spread out and its consumers reaped by event rather than by a walk over
    every connection each second."""

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

    def prepare_frame(self, payload: bytes) -> PreparedMessage:
        """`payload`'s websocket frame, as the server's websocket factory makes it (server frames are not masked)."""
        return self.ws_factory.prepareMessage(payload)

    def factories_made(self, http_factory, ws_factory) -> None:
        """Called once Daphne has made its HTTP and websocket factories, before the first connection is accepted."""

    def run(self):
        # Daphne makes its factories inside run(); ready_callable is called once they exist, before the first
        # connection is accepted.
        ready = self.ready_callable

        def configure() -> None:
            self.factories_made(self.http_factory, self.ws_factory)
            if ready is not None:
                ready()

        self.ready_callable = configure
        super().run()
