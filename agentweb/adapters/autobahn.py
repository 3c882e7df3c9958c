"""What agentweb relies on inside autobahn's websocket protocol, pinned in requirements.txt and checked by
tests/agentweb/adapters/test_autobahn.py.

`DirectIO`, mixed into the server's websocket protocol (agentweb/serve.py's AppWebSocketProtocol, before Daphne's):

- reading and writing without autobahn's debug line: its `dataReceived` and `sendData` build the line's arguments
  (colours from click included) for every chunk read and every frame written, whether debug logging is on or not,
  ~8 µs each, paid per token frame and per ping. These do what autobahn's do (its `_dataReceived`, its
  `trafficStats`), less that line; the rare cases (a queued or chopped send, octet logging: its `send_queue`,
  `logOctets`) go autobahn's way.
- bytes written straight to the socket while Twisted holds none for it (`write_through`, docs/performance.md P26).
- the `is_closed` Deferred let go of when the connection is lost (P20).

Buys (docs/performance.md, "Library reach-ins measured again", piece 2): one process's relay about twice the
tokens/s, a token's p99 beside fifty streams 2.6 to 4 times lower, 15 to 23 % less CPU per token in many-streams.
"""

from __future__ import annotations

import socket

from twisted.internet import defer
from twisted.internet.interfaces import ISSLTransport, ISystemHandle
from twisted.internet.protocol import connectionDone
from twisted.python.failure import Failure


class DirectIO:
    """Mixed into an autobahn WebSocketServerProtocol (before it): its reads and writes without the debug line."""

    #: The connection's socket while every byte written to it so far went out at once (none waits in Twisted's
    #: buffer); None once Twisted has had to keep some, or for a connection that is not a plain socket (TLS).
    system_socket: socket.socket | None = None

    def connectionMade(self) -> None:
        handle = self.transport.getHandle() if ISystemHandle.providedBy(self.transport) else None
        if isinstance(handle, socket.socket) and not ISSLTransport.providedBy(self.transport):
            self.system_socket = handle  # (under TLS the handle is the TLS connection; Twisted writes everything)
        super().connectionMade()

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        super().connectionLost(reason)
        # autobahn resolves `is_closed` with the protocol itself, and the fired Deferred keeps its result: protocol and
        # Deferred then point at each other, and with them everything the socket held (~30 objects: its queue, its
        # validators, its traffic stats) waited for a full collection (docs/performance.md, P20). Whoever waited on it
        # has been called by now; nothing in Daphne or agentweb reads it later.
        self.is_closed = defer.succeed(None)

    # autobahn's dataReceived and sendData build a debug line's arguments for every chunk read and every frame
    # written, whether debug logging is on or not. These two do what autobahn's do, less that line.

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
