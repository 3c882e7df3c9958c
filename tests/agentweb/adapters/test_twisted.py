"""agentweb/adapters/twisted.py's contract with Twisted: the HTTP channel's parser state, the handshake's request."""

from tests.support.library_contracts import at_its_pin, has_method, in_source


def test_twisted_is_installed_at_its_pin():
    at_its_pin("twisted")


def test_the_http_channels_state_and_methods():
    from twisted.protocols.basic import LineReceiver
    from twisted.web import http

    for name in ("allHeadersReceived", "allContentReceived", "requestDone", "rawDataReceived", "dataReceived"):
        has_method(http.HTTPChannel, name)
    in_source(http.HTTPChannel, "self.requests", "self._handlingRequest", "self._transferDecoder")
    in_source(http.HTTPChannel, "self._command", "self._path", "self.length", "self.persistent")
    in_source(LineReceiver, "self._buffer")
    assert issubclass(http.HTTPChannel, LineReceiver), "Twisted's HTTPChannel is no longer a LineReceiver"
    in_source(http._ChunkedTransferDecoder, "self.dataCallback")


def test_what_the_http_factory_builds_around_a_channel():
    from twisted.web import http

    from agentweb.adapters.twisted import HTTPChannel

    assert isinstance(getattr(http, "_GenericHTTPChannelProtocol", None), type), (
        "twisted.web.http._GenericHTTPChannelProtocol is gone"
    )
    built = HTTPChannel.build()
    assert isinstance(built._channel, HTTPChannel), "_GenericHTTPChannelProtocol no longer wraps its channel"


def test_the_handshakes_channel_stays_the_producer_and_holds_its_requests():
    from twisted.web import http

    in_source(http.HTTPChannel, "self.requests = []", "self.requests.append")
    in_source(http.Request, "self.channel = channel")
    in_source(http.HTTPChannel, "registerProducer")
