import re
from pathlib import Path

from twisted.internet import reactor

from agentweb.serve import PING_INTERVAL_S, AppServer, daphne_arguments


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
    assert round(sum(scheduled), 6) == 2.0  # every connection is checked every 2 s, as by Daphne
