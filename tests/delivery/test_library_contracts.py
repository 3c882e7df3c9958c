"""What the delivery and the server rely on inside the libraries they extend, checked against the installed versions.

Each library is pinned (requirements.txt) and every internal the code reads or overrides is listed here with the
module that relies on it: when an upgrade removes or changes one, the test says which, and where to look
(docs/performance.md, "Library reach-ins measured again", says what each one buys). A public API needs no entry.
"""

from __future__ import annotations

import inspect
import re
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        found = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^]]*\])?==([^\s#]+)", line)
        if found:
            pins[found[1].lower()] = found[2]
    return pins


#: The libraries whose internals are relied on, by their distribution's name.
EXTENDED = ["channels", "channels-redis", "daphne", "autobahn", "twisted", "django", "redis"]


@pytest.mark.parametrize("library", EXTENDED)
def test_each_extended_library_is_pinned_and_installed_at_its_pin(library):
    pins = pinned()
    assert library in pins, f"{library} is extended by agentweb's code: pin it in requirements.txt"
    assert version(library) == pins[library], (
        f"{library} {version(library)} is installed, {pins[library]} pinned: check the internals below against it"
    )


def has_method(cls, name: str, *params: str):
    member = inspect.getattr_static(cls, name, None)
    assert member is not None, f"{cls.__module__}.{cls.__qualname__}.{name} is gone"
    signature = inspect.signature(getattr(cls, name))
    missing = [p for p in params if p not in signature.parameters]
    assert not missing, f"{cls.__qualname__}.{name}{signature} no longer takes {missing}"


def sets_in_init(cls, *attributes: str):
    source = inspect.getsource(cls.__init__)
    missing = [a for a in attributes if f"self.{a} =" not in source and f"self.{a}:" not in source]
    assert not missing, f"{cls.__qualname__}.__init__ no longer sets {missing}"


def calls(cls, name: str, *called: str):
    source = inspect.getsource(getattr(cls, name))
    missing = [c for c in called if c not in source]
    assert not missing, f"{cls.__qualname__}.{name} no longer calls {missing}"


# --- channels: delivery/memory_layer.py, delivery/dispatch.py, agentweb/socket_session.py -------------------------


def test_channels_in_memory_layer():
    from channels.layers import InMemoryChannelLayer

    # memory_layer.py throttles the expiry walk and sends without a task per member.
    has_method(InMemoryChannelLayer, "_clean_expired")
    has_method(InMemoryChannelLayer, "receive", "channel")
    sets_in_init(InMemoryChannelLayer, "channels", "groups")
    calls(InMemoryChannelLayer, "receive", "_clean_expired", "self.channels")


def test_channels_consumer_call():
    from channels.consumer import AsyncConsumer

    # dispatch.py replaces AsyncConsumer.__call__: the attributes it sets are those channels' handlers read.
    for name in ("channel_layer_alias", "channel_receive", "base_send", "channel_name", "channel_layer"):
        assert name in inspect.getsource(AsyncConsumer.__call__), f"AsyncConsumer.__call__ no longer sets {name}"
    has_method(AsyncConsumer, "dispatch", "message")


def test_channels_session_middleware():
    from channels.sessions import InstanceSessionWrapper, SessionMiddleware

    # socket_session.py resolves the session as SessionMiddleware does, without its send wrapper.
    has_method(InstanceSessionWrapper, "resolve_session")
    calls(SessionMiddleware, "__call__", "InstanceSessionWrapper", "resolve_session")


# --- channels_redis: delivery/redis_layer.py, delivery/log.py (its storage format, written by Lua) --------------


def test_channels_redis_layer():
    from channels_redis.core import RedisChannelLayer

    has_method(RedisChannelLayer, "receive_single", "channel")
    has_method(RedisChannelLayer, "consistent_hash", "value")
    has_method(RedisChannelLayer, "connection", "index")
    has_method(RedisChannelLayer, "serialize", "message")
    has_method(RedisChannelLayer, "deserialize", "message")
    sets_in_init(RedisChannelLayer, "receive_buffer", "group_expiry", "prefix", "hosts")
    assert isinstance(RedisChannelLayer.brpop_timeout, int | float), "RedisChannelLayer.brpop_timeout is gone"
    # The reader fills receive_buffer, whose queues receive() waits on.
    calls(RedisChannelLayer, "receive", "receive_buffer")


def test_channels_redis_storage_format():
    """A process's messages: a sorted set keyed prefix + channel, each member a random prefix of
    `random_prefix_length` bytes then the msgpack of the message, `__asgi_channel__` naming its channel
    (delivery/redis_layer.py DELIVER_LUA writes members so)."""
    import msgpack
    from channels_redis.core import RedisChannelLayer

    layer = RedisChannelLayer(hosts=["redis://127.0.0.1:6379/0"])
    packed = layer.serialize({"type": "x", "__asgi_channel__": "c"})
    assert msgpack.unpackb(packed[12:]) == {"type": "x", "__asgi_channel__": "c"}, "serialize's layout changed"
    assert layer.deserialize(packed) == {"type": "x", "__asgi_channel__": "c"}
    for name in ("zadd", "bzpopmin", "zremrangebyscore"):
        assert name in inspect.getsource(RedisChannelLayer).lower(), f"channels_redis no longer uses {name}"


# --- daphne and autobahn: agentweb/serve.py ----------------------------------------------------------------


def test_daphne_server():
    from daphne.server import Server

    has_method(Server, "timeout_checker")
    has_method(Server, "application_checker")
    has_method(Server, "create_application", "protocol", "scope")
    has_method(Server, "protocol_disconnected", "protocol")
    has_method(Server, "run")
    sets_in_init(Server, "ready_callable", "application_close_timeout")
    for name in ("self.connections", "self.ws_factory", "self.http_factory"):
        assert name in inspect.getsource(Server), f"daphne's Server no longer has {name}"


def test_autobahn_websocket_protocol():
    from autobahn.twisted.websocket import WebSocketServerProtocol
    from autobahn.websocket.protocol import WebSocketProtocol

    has_method(WebSocketProtocol, "_dataReceived", "data")
    has_method(WebSocketServerProtocol, "sendData", "data", "sync", "chopsize")
    has_method(WebSocketProtocol, "sendPreparedMessage", "preparedMsg")
    source = inspect.getsource(inspect.getmodule(WebSocketProtocol))
    for name in ("self.send_queue", "self.trafficStats", "self.logOctets", "self.websocket_extensions_in_use"):
        assert name in source, f"autobahn's WebSocketProtocol no longer has {name}"
    assert isinstance(WebSocketServerProtocol.CONFIG_ATTRS, list | tuple), (
        "WebSocketServerProtocol.CONFIG_ATTRS is gone"
    )


# --- Twisted: agentweb/http_channel.py, agentweb/serve.py ----------------------------------------------------


def test_twisted_http_channel():
    from twisted.web.http import HTTPChannel

    for name in ("allHeadersReceived", "allContentReceived", "requestDone", "rawDataReceived", "dataReceived"):
        has_method(HTTPChannel, name)
    source = inspect.getsource(HTTPChannel)
    for name in ("self.requests", "self._handlingRequest", "self._transferDecoder", "self._command", "self._path"):
        assert name in source, f"Twisted's HTTPChannel no longer has {name}"


# --- Django: agentweb/http_handler.py --------------------------------------------------------------------------


def test_django_asgi_handler():
    from django.core.handlers.asgi import ASGIHandler

    has_method(ASGIHandler, "read_body", "receive")
    has_method(ASGIHandler, "create_request", "scope", "body_file")
    has_method(ASGIHandler, "send_response", "response", "send")
    has_method(ASGIHandler, "handle", "scope", "receive", "send")
