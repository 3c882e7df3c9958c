"""agentweb/adapters/daphne.py's contract with Daphne: what ReapingServer and has_open_consumer rely on."""

import inspect

from tests.support.library_contracts import at_its_pin, has_method, sets_in_init


def test_daphne_is_installed_at_its_pin():
    at_its_pin("daphne")


def test_the_server_methods_reaping_server_overrides_and_calls():
    from daphne.server import Server

    has_method(Server, "timeout_checker")
    has_method(Server, "application_checker")
    has_method(Server, "create_application", "protocol", "scope")
    has_method(Server, "protocol_connected", "protocol")
    has_method(Server, "protocol_disconnected", "protocol")
    has_method(Server, "run")
    has_method(Server, "stop")
    sets_in_init(Server, "ready_callable", "application_close_timeout")


def test_the_servers_connections_factories_and_timers():
    from daphne.server import Server
    from daphne.ws_protocol import WebSocketProtocol

    source = inspect.getsource(Server)
    for name in ("self.connections", "self.ws_factory", "self.http_factory", "self.ready_callable()"):
        assert name in source, f"daphne's Server no longer has {name}"
    # What a connection's details hold, as has_open_consumer and reap read them.
    for key in ('"application_instance"', '"disconnected"'):
        assert key in source, f"daphne's Server.connections no longer holds {key}"
    # What reap calls on a connection's protocol, and the timeout checker on each.
    has_method(WebSocketProtocol, "check_timeouts")
    has_method(WebSocketProtocol, "handle_exception", "exception")
