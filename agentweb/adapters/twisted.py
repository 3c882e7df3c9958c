"""What agentweb relies on inside Twisted's HTTP channel (twisted.web.http), pinned in requirements.txt and checked by
tests/agentweb/adapters/test_twisted.py.

- `HTTPChannel`: Twisted's channel with the parser's state agentweb/http_channel.py reads (whether a request is being
  handled, the body's decoder, the request line, what is read but not parsed yet) under plain names, and `build`,
  what Twisted's HTTPFactory builds around a channel (its private `_GenericHTTPChannelProtocol`). Buys: a body over
  its limit refused (413) before it is read, a request too slow to arrive closed (408): a security limit.
- `handshake_channel` / `forget_handshake_request`: the HTTP channel and request that carried a websocket's handshake
  let go of each other (`HTTPChannel.requests`), so that neither lives as long as the socket nor is left in a
  reference cycle when it closes (docs/performance.md, P19; piece 4: kept until an hour of socket churn shows it
  can go).
"""

from __future__ import annotations

from twisted.web import http


class HTTPChannel(http.HTTPChannel):
    """Twisted's HTTP/1.1 channel, the parser's state readable under plain names."""

    @classmethod
    def build(cls) -> http._GenericHTTPChannelProtocol:
        """What Twisted's HTTPFactory builds for a connection (its `protocol`), with this channel inside."""
        return http._GenericHTTPChannelProtocol(cls())

    @property
    def handling_request(self) -> bool:
        """A request is with the app (what arrives meanwhile is the next request's, kept by Twisted for later)."""
        return self._handlingRequest

    @property
    def transfer_decoder(self):
        """The current body's decoder (its `dataCallback` gets the body's bytes), once the headers are in."""
        return self._transferDecoder

    @property
    def request_path(self) -> bytes:
        """The current request's target, as it came on the request line."""
        return self._path

    @property
    def request_command(self) -> bytes:
        """The current request's method, as it came on the request line."""
        return self._command

    @property
    def unparsed(self) -> bytes:
        """What the line reader has read but not parsed yet (a request line not yet whole)."""
        return self._buffer


def handshake_channel(transport) -> http.HTTPChannel | None:
    """The HTTP channel that carried a websocket's handshake: it stays the connection's producer after the upgrade."""
    channel = getattr(transport, "producer", None)
    return channel if isinstance(channel, http.HTTPChannel) else None


def forget_handshake_request(channel: http.HTTPChannel) -> None:
    """Let go of the HTTP request that carried a socket's handshake, now that Daphne has upgraded it.

    Twisted's HTTP channel stays the connection's producer for the socket's whole life, and it and its request
    point at each other: the request (its headers, its body's buffer, its addresses: ~24 objects) was kept as long
    as the socket, then left as a reference cycle that only a full collection frees: every socket that closed
    left one (docs/performance.md, P19). Call it at the next turn of the loop: Daphne still uses the request's
    channel once the websocket protocol is connected."""
    for request in channel.requests:
        request.channel = None
    channel.requests = []
