"""agentweb/adapters/autobahn.py's contract with autobahn: what DirectIO reads and overrides."""

from tests.support.library_contracts import at_its_pin, has_method, in_source


def test_autobahn_is_installed_at_its_pin():
    at_its_pin("autobahn")


def test_the_protocols_reads_and_writes():
    from autobahn.twisted.websocket import WebSocketServerProtocol
    from autobahn.websocket.protocol import WebSocketProtocol

    has_method(WebSocketProtocol, "_dataReceived", "data")
    has_method(WebSocketServerProtocol, "dataReceived", "data")
    has_method(WebSocketServerProtocol, "sendData", "data", "sync", "chopsize")
    has_method(WebSocketServerProtocol, "connectionMade")
    has_method(WebSocketServerProtocol, "connectionLost", "reason")
    in_source(WebSocketProtocol, "self.send_queue", "self.trafficStats", "self.logOctets", "self.is_closed")
    in_source(WebSocketProtocol, "outgoingOctetsWireLevel", "preopenOutgoingOctetsWireLevel")


def test_what_send_now_and_the_size_limit_use():
    from autobahn.websocket.protocol import PreparedMessage, WebSocketProtocol

    has_method(WebSocketProtocol, "sendPreparedMessage", "preparedMsg")
    has_method(WebSocketProtocol, "beginMessage", "isBinary", "doNotCompress")
    has_method(WebSocketProtocol, "sendMessageFrame", "payload", "sync")
    has_method(WebSocketProtocol, "endMessage")
    in_source(WebSocketProtocol, "self.websocket_extensions_in_use")
    in_source(PreparedMessage, "self.payloadHybi")
