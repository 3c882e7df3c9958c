"""An HTTP connection as it arrives, before Daphne and the app see a request: its body's limit, and its timeouts.

Twisted reads a whole body (into memory, or a temporary file) before Daphne hands it on, and Daphne then queues all
of it for the app at once: a 1 GB POST to the sign-in page, with no one signed in, made the process hold 1 GB. Here
a body over its route's limit (agentweb/request_limits.py) is refused with 413 as soon as its Content-Length says so,
or, when it is chunked, as soon as what has arrived passes the limit: nothing of it is kept.

And a request must arrive in time. Twisted's only timeout is for a connection that sends nothing at all for 60 s,
which one byte now and then puts off for ever: 1,500 connections that each sent half a request stayed open. Here
the request line and headers must all have arrived within AGENTWEB_REQUEST_TIMEOUT of the connection's opening (or
of its previous response), and a body must keep up AGENTWEB_REQUEST_BODY_MIN_RATE bytes a second after the same
time (Apache's mod_reqtimeout does the same); a connection that falls behind is answered 408 and closed.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import urlsplit

from twisted.internet.interfaces import IDelayedCall

from agentweb.adapters.twisted import HTTPChannel
from agentweb.request_limits import RequestLimits

logger = logging.getLogger("daphne.server")

#: After a refusal, what the client still sends is read and dropped until it has sent nothing for LINGER_S, or for
#: LINGER_MAX_S in all, and then the connection is closed: a socket closed with bytes unread answers with a reset, and
#: a client still sending its body (a browser uploading a file) would lose the answer to it (Apache does the same).
LINGER_S = 2.0
LINGER_MAX_S = 30.0

REASONS = {408: "Request Timeout", 413: "Content Too Large"}


class AppHTTPChannel(HTTPChannel):
    """Twisted's HTTP/1.1 channel, refusing a body over its route's limit and closing a request that is too slow (the
    parser's state it reads: agentweb/adapters/twisted.py)."""

    limits: RequestLimits
    #: Once a request was refused or timed out: what arrives after is dropped until the connection closes.
    refused = False
    _deadline: IDelayedCall | None = None
    _body_since = 0.0
    _body_received = 0
    _refused_at = 0.0
    _last_heard = 0.0

    def connectionMade(self) -> None:
        super().connectionMade()
        self.limits = self.factory.server.request_limits
        self._await_head()

    def dataReceived(self, data: bytes) -> None:
        if self.refused:  # read and dropped while the answer's connection lingers
            self._last_heard = self.factory.reactor.seconds()
            return
        super().dataReceived(data)

    def rawDataReceived(self, data: bytes) -> None:
        if self.refused:
            return
        if not self.handling_request:  # (otherwise: the next request, kept for later by Twisted)
            self._body_received += len(data)
        super().rawDataReceived(data)

    def allHeadersReceived(self) -> None:
        self._cancel_deadline()
        target = self.request_path.decode("latin-1")
        limit = self.limits.body_limit(target)
        if self.length is not None and self.length > limit:
            self.requests[-1].gotLength(0)  # an empty body, closed with the connection
            self._refuse(target, f"{self.length:,} bytes announced")
            return
        super().allHeadersReceived()
        if self.length is None:  # chunked: counted as it arrives
            self._count_body(target, limit)
        if self.length != 0 and self.limits.timeout_s and self.limits.body_min_rate:
            self._body_since = self.factory.reactor.seconds()
            self._body_received = 0
            self._deadline = self.callLater(self.limits.timeout_s, self._check_body_pace)

    def allContentReceived(self) -> None:
        if self.refused:  # the rest of a refused chunked body, in the same read
            return
        self._cancel_deadline()
        super().allContentReceived()

    def requestDone(self, request) -> None:
        if self.persistent:  # before Twisted reads the next request, if it has it already
            self._await_head()
        super().requestDone(request)

    def connectionLost(self, reason) -> None:
        self._cancel_deadline()
        super().connectionLost(reason)

    # --- the body's limit ---------------------------------------------------------------------------------------

    def _count_body(self, target: str, limit: int) -> None:
        decoder = self.transfer_decoder
        deliver = decoder.dataCallback
        received = 0

        def counted(data: bytes) -> None:
            nonlocal received
            if self.refused:
                return
            received += len(data)
            if received > limit:
                self._refuse(target, f"over {limit:,} bytes sent")
                return
            deliver(data)

        decoder.dataCallback = counted

    def _refuse(self, target: str, what: str) -> None:
        limit = self.limits.body_limit(target)
        logger.info(
            "Refused the body of %s %s: %s, its limit is %s bytes",
            self.request_command.decode("latin-1"),
            _path(target),
            what,
            limit,
        )
        self._answer_and_close(413, self.limits.refusal_body(target))

    # --- the timeouts -------------------------------------------------------------------------------------------

    def _await_head(self) -> None:
        self._cancel_deadline()
        if self.limits.timeout_s:
            self._deadline = self.callLater(self.limits.timeout_s, self._head_too_slow)

    def _head_too_slow(self) -> None:
        self._deadline = None
        # `unparsed`: what the line reader read but has not parsed yet (a request line not yet whole).
        if not self.requests and not self.unparsed:  # an idle connection between requests: nothing to answer
            self.transport.loseConnection()
            return
        logger.info("Closed a connection whose request's headers had not all arrived in time")
        self._answer_and_close(408, {"error": "The request took too long to arrive."})

    def _check_body_pace(self) -> None:
        due = self._body_since + self.limits.timeout_s + self._body_received / self.limits.body_min_rate
        wait = due - self.factory.reactor.seconds()
        if wait > 0:
            self._deadline = self.callLater(wait, self._check_body_pace)
            return
        self._deadline = None
        logger.info("Closed a connection whose request's body arrived too slowly")
        self._answer_and_close(408, {"error": "The request took too long to arrive."})

    def _cancel_deadline(self) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None

    # --- closing ------------------------------------------------------------------------------------------------

    def _answer_and_close(self, status: int, body: dict) -> None:
        """The answer, then the connection closed: what the client still sends meanwhile is read and dropped (see
        LINGER_S), so that it can read the answer."""
        self.refused = True
        self._refused_at = self._last_heard = self.factory.reactor.seconds()
        self._cancel_deadline()
        self.setTimeout(None)
        content = json.dumps(body).encode()
        head = (
            f"HTTP/1.1 {status} {REASONS[status]}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(content)}\r\nConnection: close\r\n\r\n"
        )
        self.transport.write(head.encode("latin-1") + content)
        half_close = getattr(self.transport, "loseWriteConnection", None)
        if half_close is not None:
            half_close()
        self._deadline = self.callLater(LINGER_S, self._end_linger)

    def _end_linger(self) -> None:
        now = self.factory.reactor.seconds()
        if now - self._last_heard < LINGER_S and now - self._refused_at < LINGER_MAX_S:  # the client is still sending
            self._deadline = self.callLater(LINGER_S - (now - self._last_heard), self._end_linger)
            return
        self._deadline = None
        self.transport.abortConnection()


def _path(target: str) -> str:
    """A request target's path only: its query string may hold a token."""
    return urlsplit(target).path
