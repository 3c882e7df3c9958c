import asyncio
import re
from pathlib import Path

import pytest
from daphne.ws_protocol import WebSocketFactory
from twisted.internet import reactor
from twisted.internet.address import IPv4Address
from twisted.internet.testing import StringTransport

from agentweb.heap import HeapFreezer
from agentweb.serve import (
    PING_INTERVAL_S,
    AppServer,
    AppWebSocketProtocol,
    daphne_arguments,
    forget_handshake_request,
)
from delivery.take_now import SEND_NOW


def test_daphne_limits_received_messages_and_frames_to_the_frame_limit():
    assert daphne_arguments(["-p", "8000", "agentweb.asgi:application"], 262144) == [
        "--websocket-max-message-size",
        "262144",
        "--websocket-max-frame-size",
        "262144",
        "--ping-interval",
        str(PING_INTERVAL_S),
        "-p",
        "8000",
        "agentweb.asgi:application",
    ]


def test_a_limit_given_on_the_command_line_is_kept():
    argv = ["--websocket-max-message-size", "100", "--websocket-max-frame-size=50", "agentweb.asgi:application"]

    assert daphne_arguments(argv, 262144)[-len(argv) :] == argv
    assert "262144" not in daphne_arguments(argv, 262144)


def test_a_ping_interval_given_on_the_command_line_is_kept():
    argv = ["--ping-interval", "5", "agentweb.asgi:application"]

    assert daphne_arguments(argv, 262144).count("--ping-interval") == 1


def test_the_page_pings_before_the_server_would():
    socket_js = (Path(__file__).parents[2] / "static/chat/socket.js").read_text()
    page_ping_ms = int(re.search(r"PING_INTERVAL_MS = ([\d_]+);", socket_js).group(1).replace("_", ""))

    assert page_ping_ms < PING_INTERVAL_S * 1000


class Connection:
    def __init__(self, checked: list):
        self.checked = checked

    def check_timeouts(self):
        self.checked.append(self)


def test_each_connection_is_checked_once_per_round_a_slice_at_a_time(monkeypatch):
    scheduled = []
    monkeypatch.setattr(reactor, "callLater", lambda delay, call: scheduled.append(delay))
    server = AppServer.__new__(AppServer)  # its checker only reads `connections`
    per_tick: list[list] = []
    server.connections = {}
    for _ in range(95):
        server.connections[Connection(per_tick)] = {}
    ticks = []
    for _ in range(AppServer.TIMEOUT_SLICES):
        per_tick.clear()
        server.timeout_checker()
        ticks.append(list(per_tick))

    assert sorted(map(id, (c for tick in ticks for c in tick))) == sorted(map(id, server.connections))
    assert max(len(tick) for tick in ticks) == 10
    assert round(sum(scheduled), 6) == AppServer.TIMEOUT_CHECK_S  # every connection, once per round


class Protocol:
    """What the server calls on a connection's protocol when its consumer fails."""

    def __init__(self):
        self.errors: list[BaseException] = []

    def handle_exception(self, error):
        self.errors.append(error)


@pytest.fixture
def server(monkeypatch):
    """An AppServer with no sockets of its own: connections are added by the test, timers recorded, not run."""
    server = AppServer.__new__(AppServer)
    server.connections = {}
    server.application_close_timeout = 10
    server.freezer = HeapFreezer()
    server.timers = []
    monkeypatch.setattr(reactor, "callLater", lambda delay, call, *args: server.timers.append((delay, call, args)))
    return server


def connect(server: AppServer, app) -> Protocol:
    protocol = Protocol()
    server.application = app
    server.protocol_connected(protocol)
    server.create_application(protocol, {"type": "websocket"})
    return protocol


async def consumer_that_returns(scope, receive, send):
    return None


async def consumer_that_never_returns(scope, receive, send):
    await asyncio.Event().wait()


async def consumer_that_raises(scope, receive, send):
    raise ValueError("consumer bug")


async def test_a_closed_socket_whose_consumer_finished_is_forgotten_at_once(server):
    protocol = connect(server, consumer_that_returns)
    await asyncio.sleep(0)  # the consumer runs and returns

    server.protocol_disconnected(protocol)

    assert protocol not in server.connections
    assert server.timers == []


async def test_a_consumer_that_finishes_after_its_socket_closed_is_forgotten_when_it_does(server):
    finish = asyncio.Event()

    async def consumer_that_cleans_up(scope, receive, send):
        await finish.wait()

    protocol = connect(server, consumer_that_cleans_up)
    server.protocol_disconnected(protocol)
    assert protocol in server.connections

    finish.set()
    await asyncio.sleep(0.01)

    assert protocol not in server.connections


async def test_a_consumer_still_running_after_the_close_timeout_is_cancelled_and_forgotten(server, caplog):
    protocol = connect(server, consumer_that_never_returns)
    server.protocol_disconnected(protocol)
    [(delay, reap, args)] = server.timers
    assert delay > server.application_close_timeout

    server.connections[protocol]["disconnected"] -= delay  # as if that much time had passed
    reap(*args)
    await asyncio.sleep(0.01)

    assert protocol not in server.connections
    assert "took too long to shut down and was killed" in caplog.text


async def test_a_consumer_that_raises_closes_its_open_socket_with_the_error_logged(server, caplog):
    protocol = connect(server, consumer_that_raises)
    await asyncio.sleep(0.01)

    assert [str(error) for error in protocol.errors] == ["consumer bug"]
    assert "Exception inside application: consumer bug" in caplog.text
    assert "application_instance" not in server.connections[protocol]  # the socket's close removes the rest


async def test_the_sweep_reaps_what_no_event_did(server):
    protocol = connect(server, consumer_that_returns)
    await asyncio.sleep(0)
    server.connections[protocol]["disconnected"] = 1.0  # marked closed behind the server's back

    server.application_checker()

    assert protocol not in server.connections
    assert server.timers[-1][0] == AppServer.REAP_SWEEP_S


def test_a_connection_has_the_options_the_server_set_on_its_factory():
    factory = WebSocketFactory(server_class=None)
    factory.setProtocolOptions(maxMessagePayloadSize=1234, failByDrop=False, autoPingTimeout=7)
    factory.protocol = AppWebSocketProtocol

    connection = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 5000))
    connection.makeConnection(StringTransport())

    assert isinstance(connection, AppWebSocketProtocol)
    assert (connection.maxMessagePayloadSize, connection.failByDrop, connection.autoPingTimeout) == (1234, False, 7)
    assert connection.perMessageCompressionAccept is factory.perMessageCompressionAccept
    assert connection.state == connection.STATE_CONNECTING


def test_a_socket_lets_go_of_its_handshake_request_without_a_collection(monkeypatch):
    import gc
    import weakref

    from twisted.web.http import HTTPChannel

    calls = []
    monkeypatch.setattr(reactor, "callLater", lambda delay, call, *args: calls.append((call, args)))
    transport = StringTransport()
    channel = HTTPChannel()  # the connection's HTTP protocol, which stays the transport's producer after the upgrade
    channel.makeConnection(transport)
    channel.dataReceived(b"GET /ws/chat/ HTTP/1.1\r\nHost: chat.example.com\r\nUpgrade: websocket\r\n\r\n")
    request = weakref.ref(channel.requests[0])
    factory = WebSocketFactory(server_class=None)
    factory.protocol = AppWebSocketProtocol
    transport.protocol = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 5000))  # Daphne's upgrade
    transport.protocol.makeConnection(transport)
    scheduled = [(call, args) for call, args in calls if call is forget_handshake_request]
    calls.clear()  # (the HTTP channel's idle timer, also recorded, is not run)

    gc.disable()  # what is freed here is freed by reference counting, as soon as nothing uses it
    try:
        for call, args in scheduled:  # the loop's next turn
            call(*args)
        scheduled = call = args = None  # (they held the channel)
        assert request() is None  # not kept for the socket's life

        channel_ref = weakref.ref(channel)
        del channel
        transport.unregisterProducer()  # the socket closes: Twisted's connectionLost drops its producer
        assert channel_ref() is None  # not left in a reference cycle for a full collection to find
    finally:
        gc.enable()


HANDSHAKE = (
    b"GET /ws/chat/ HTTP/1.1\r\nHost: chat.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def consumer_that_accepts(scope, receive, send):
    await receive()
    await send({"type": "websocket.accept"})
    while (await receive())["type"] != "websocket.disconnect":
        pass


async def test_a_socket_that_closes_is_freed_without_a_collection(monkeypatch):
    import gc
    import weakref

    from daphne.http_protocol import HTTPFactory
    from daphne.ws_protocol import WebSocketFactory
    from twisted.internet.error import ConnectionLost
    from twisted.internet.task import Clock
    from twisted.python.failure import Failure

    clock = Clock()
    monkeypatch.setattr(reactor, "callLater", clock.callLater)
    server = AppServer(consumer_that_accepts, endpoints=["tcp:0"])
    server.connections = {}  # what run() sets up, without listening
    server.http_factory = HTTPFactory(server)
    server.ws_factory = WebSocketFactory(server, server="daphne")
    server.ws_factory.protocol = AppWebSocketProtocol
    peer = IPv4Address("TCP", "127.0.0.1", 5000)
    transport = StringTransport(peerAddress=peer, hostAddress=IPv4Address("TCP", "127.0.0.1", 8000))
    channel = server.http_factory.buildProtocol(peer)
    channel.makeConnection(transport)
    channel.dataReceived(HANDSHAKE)  # Daphne's HTTP channel upgrades the connection to a websocket
    for _ in range(3):
        await asyncio.sleep(0)  # the consumer accepts
    socket = transport.protocol
    assert isinstance(socket, AppWebSocketProtocol) and socket.state == socket.STATE_OPEN
    clock.advance(0)

    gc.disable()  # what is freed here is freed by reference counting, as soon as nothing uses it
    try:
        socket.connectionLost(Failure(ConnectionLost()))  # dropped, no close handshake
        for _ in range(3):
            await asyncio.sleep(0)  # the consumer hears of it and returns
        clock.advance(server.application_close_timeout + 1)  # the server's own check that it did
        assert server.connections == {}
        transport.protocol = None  # Twisted lets go of a closed connection's protocol
        closed = weakref.ref(socket)
        del socket, channel

        assert closed() is None  # not left in a reference cycle for a full collection to find
    finally:
        gc.enable()


def open_socket(server: AppServer, port: int) -> tuple[AppWebSocketProtocol, StringTransport]:
    """A connection through Daphne's own HTTP channel, upgraded to a websocket (its consumer not yet run)."""
    peer = IPv4Address("TCP", "127.0.0.1", port)
    transport = StringTransport(peerAddress=peer, hostAddress=IPv4Address("TCP", "127.0.0.1", 8000))
    channel = server.http_factory.buildProtocol(peer)
    channel.makeConnection(transport)
    channel.dataReceived(HANDSHAKE)
    return transport.protocol, transport


def listening(server: AppServer) -> AppServer:
    """What run() sets up, without listening."""
    from daphne.http_protocol import HTTPFactory

    server.connections = {}
    server.http_factory = HTTPFactory(server)
    server.ws_factory = WebSocketFactory(server, server="daphne")
    server.ws_factory.protocol = AppWebSocketProtocol
    return server


def text_frames(wire: bytes) -> list[str]:
    """The unmasked text frames (each under 126 bytes) after the handshake's response."""
    frames, at = [], wire.index(b"\r\n\r\n") + 4
    while at < len(wire):
        assert wire[at] == 0x81 and wire[at + 1] < 126  # FIN, text; not masked
        length = wire[at + 1]
        frames.append(wire[at + 2 : at + 2 + length].decode())
        at += 2 + length
    return frames


def accepting_with_send_now(sends: list):
    """A consumer that accepts its socket, its scope's send_now put in `sends`."""

    async def consumer(scope, receive, send):
        sends.append(scope["extensions"][SEND_NOW])
        await receive()
        await send({"type": "websocket.accept"})
        while (await receive())["type"] != "websocket.disconnect":
            pass

    return consumer


async def test_a_consumer_sends_a_text_now_to_its_open_socket_through_its_scope():
    sends = []
    server = listening(AppServer(accepting_with_send_now(sends), endpoints=["tcp:0"]))
    first_wire, second_wire = open_socket(server, 5000)[1], open_socket(server, 5001)[1]
    for _ in range(3):
        await asyncio.sleep(0)  # the consumers accept
    text = '{"type":"message.delta","seq":7,"text":"héllo"}'

    assert all(send(text) for send in sends)

    assert text_frames(first_wire.value()) == [text] and text_frames(second_wire.value()) == [text]


async def test_several_texts_sent_now_arrive_as_frames_of_their_own_in_order():
    sends = []
    server = listening(AppServer(accepting_with_send_now(sends), endpoints=["tcp:0"]))
    wire = open_socket(server, 5000)[1]
    for _ in range(3):
        await asyncio.sleep(0)
    texts = [f'{{"type":"message.delta","seq":{n},"text":"tok {n}"}}' for n in range(5)]

    assert sends[0](*texts)

    assert text_frames(wire.value()) == texts


async def test_a_text_is_not_sent_now_to_a_socket_not_yet_accepted_or_gone():
    sends = []

    async def consumer(scope, receive, send):
        sends.append(scope["extensions"][SEND_NOW])
        await asyncio.Event().wait()  # never accepts

    server = listening(AppServer(consumer, endpoints=["tcp:0"]))
    socket, wire = open_socket(server, 5000)
    await asyncio.sleep(0)
    [send_now] = sends

    assert not send_now('{"type":"pong"}')  # Daphne's own send says why (not accepted)
    assert b"pong" not in wire.value()
    server.protocol_disconnected(socket)
    socket.state = socket.STATE_OPEN  # as though it had been accepted: gone is still gone
    assert not send_now('{"type":"pong"}')
    assert b"pong" not in wire.value()


def test_frames_keep_their_order_when_the_socket_cannot_take_them_all():
    import socket

    from twisted.internet import tcp

    class Accepted(tcp.Connection):  # what tcp.Server is, without its listening port
        def getPeer(self):
            return IPv4Address("TCP", "127.0.0.1", 5000)

        def getHost(self):
            return IPv4Address("TCP", "127.0.0.1", 8000)

    listener = socket.create_server(("127.0.0.1", 0))
    ours = socket.create_connection(listener.getsockname())
    theirs, _ = listener.accept()
    ours.setblocking(False)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    factory = WebSocketFactory(server_class=None)
    factory.protocol = AppWebSocketProtocol
    connection = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 5000))
    transport = Accepted(ours, connection, reactor)
    transport.connected = True
    connection.makeConnection(transport)
    chunks = [bytes([65 + n % 26]) * 1000 for n in range(350)]  # far more than the socket takes unread
    try:
        for chunk in chunks[:300]:
            connection.sendData(chunk)
        received = theirs.recv(20_000)  # the socket has room again, while Twisted still keeps bytes
        for chunk in chunks[300:]:
            connection.sendData(chunk)
        theirs.settimeout(0.2)
        while len(received) < 350_000:
            try:
                received += theirs.recv(65536)
            except TimeoutError:
                transport.doWrite()  # the event loop's turn: Twisted sends what it kept

        assert received == b"".join(chunks)
    finally:
        transport.stopWriting()
        for each in (ours, theirs, listener):
            each.close()


def masked_text_frame(text: str) -> bytes:
    """A client's text frame (under 126 bytes), masked as clients must."""
    payload, mask = text.encode(), b"\x01\x02\x03\x04"
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class Clock:
    """time.time, moved by the test."""

    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def checked_server(monkeypatch):
    """A listening AppServer pinging after 30 s of silence, its timers recorded (not run), the time the test's."""
    import time

    clock = Clock(1_000_000.0)
    monkeypatch.setattr(time, "time", clock)
    from twisted.internet.task import Clock as Timers

    monkeypatch.setattr(reactor, "callLater", Timers().callLater)
    server = listening(AppServer(consumer_that_accepts, endpoints=["tcp:0"], ping_interval=30))
    server.clock = clock
    return server


def check_every_slice(server: AppServer) -> None:
    for _ in range(AppServer.TIMEOUT_SLICES):
        server.timeout_checker()


def pings(wire: StringTransport) -> int:
    """The ping frames the server wrote after the handshake's response (each under 126 bytes, not masked)."""
    data = wire.value()
    count, at = 0, data.index(b"\r\n\r\n") + 4
    while at < len(data):
        count += data[at] == 0x89  # FIN, ping
        at += 2 + data[at + 1]
    return count


async def test_a_silent_socket_is_pinged_once_its_interval_has_passed_and_not_before(checked_server):
    _, wire = open_socket(checked_server, 5000)
    for _ in range(3):
        await asyncio.sleep(0)  # the consumer accepts
    check_every_slice(checked_server)

    checked_server.clock.now += 29
    check_every_slice(checked_server)
    assert pings(wire) == 0

    checked_server.clock.now += 2
    check_every_slice(checked_server)
    assert pings(wire) == 1


async def test_a_frame_from_the_socket_puts_off_its_ping_after_it_was_checked(checked_server):
    socket, wire = open_socket(checked_server, 5000)
    for _ in range(3):
        await asyncio.sleep(0)
    check_every_slice(checked_server)  # nothing due for 30 s

    checked_server.clock.now += 20
    socket.dataReceived(masked_text_frame('{"type":"ping"}'))
    checked_server.clock.now += 11  # 31 s since it opened, 11 since it spoke
    check_every_slice(checked_server)
    assert pings(wire) == 0

    checked_server.clock.now += 20  # 31 s since it spoke
    check_every_slice(checked_server)
    assert pings(wire) == 1


async def test_a_handshake_the_app_never_answers_is_refused_after_the_connect_timeout(checked_server):
    async def consumer_that_never_accepts(scope, receive, send):
        await asyncio.Event().wait()

    checked_server.application = consumer_that_never_accepts
    socket, wire = open_socket(checked_server, 5000)
    await asyncio.sleep(0)
    check_every_slice(checked_server)
    assert socket.state == socket.STATE_CONNECTING

    checked_server.clock.now += checked_server.websocket_connect_timeout + 1
    check_every_slice(checked_server)

    assert b"403" in wire.value().split(b"\r\n")[0]
