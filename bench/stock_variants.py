"""The library's own behaviour put back in place of one of agentweb's reach-ins into it, one variant per piece, to
measure what each piece buys (issue 37: keep what buys 10 % on a figure a user feels, drop the rest). Switched on
by bench/variant_asgi.py from BENCH_VARIANTS; nothing in the app's files changes. Each patch names the module it
patches; at merge, a module that moved needs its import path here changed, nothing more.

Server variants patch agentweb/serve.py, whose classes Daphne's command line uses to build the server after it
has imported the ASGI app: they take effect only in a process started as `python -m bench.variant_serve` (which
imports agentweb.serve as a module and then runs its main), and a Daphne process started any other way with one of
them refuses to start rather than measure the app unchanged. A run worker (`python -m bench.variant_worker`) has
no server and skips them.

Every variant notes the first time the library's own code runs in its place ("evidence", on stderr, i.e. the
process's log, and appended to $BENCH_VARIANT_LOG when set): a variant that silently did nothing would read as
"buys nothing, drop it". The note's hook puts the library's function back on its first call, so the measured
path pays nothing for it. tests/bench/test_stock_variants.py checks every variant's evidence in a real run.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys

#: Variants of agentweb/serve.py (the Daphne process only).
SERVER = {
    "stock-daphne-timers": "Daphne's timeout_checker, application_checker and reaping "
    "(agentweb/adapters/daphne.py ReapingServer)",
    "stock-autobahn-io": "autobahn's dataReceived and sendData, Twisted's write (agentweb/adapters/autobahn.py)",
    "no-send-now": "no send_now scope extension: a socket's frames through Daphne's send (and so no take-now)",
    "no-shared-frame": "send_now frames each socket's text on its own (AppServer.frame_of not shared)",
    "stock-handshake": "the handshake's HTTP request kept (agentweb/adapters/twisted.py forget_handshake_request)",
    "stock-http-channel": "Twisted's own HTTPChannel (no 413 before the body, no 408: agentweb/http_channel.py)",
}
#: Variants of the app (every process that imports bench/variant_asgi.py).
APP = {
    "stock-dispatch": "channels' AsyncConsumer.__call__ / await_many_dispatch (delivery/dispatch.py; no take-now)",
    "no-take-now": "the layer never hands an event to an idle consumer (delivery/take_now.py)",
    "stock-inmemory-layer": "channels' own InMemoryChannelLayer (delivery/memory_layer.py)",
    "stock-redis-layer": "channels_redis's own RedisChannelLayer, the log's publish then group_send "
    "(delivery/redis_layer.py, delivery/log.py _PUBLISH_AND_SEND)",
    "stock-http-handler": "Django's own ASGIHandler (agentweb/http_handler.py)",
}
KNOWN = frozenset(SERVER) | frozenset(APP)

_noted: set[str] = set()


def evidence(variant: str, what: str) -> None:
    """Note, once per process, that the variant's library code ran."""
    if (variant, what) in _noted:
        return
    _noted.add((variant, what))
    line = f"bench variant {variant}: {what} (pid {os.getpid()})"
    print(line, file=sys.stderr, flush=True)
    path = os.environ.get("BENCH_VARIANT_LOG")
    if path:
        with open(path, "a") as out:
            out.write(line + "\n")


def on_first_call(owner, name: str, variant: str, what: str, check=None) -> None:
    """`owner.name` (a function in a class's or a module's own namespace) noted as evidence at its first call for
    which `check(*args, **kwargs)` holds; then put back as it was."""
    original = vars(owner)[name]

    def noted(args, kwargs) -> None:
        if check is None or check(*args, **kwargs):
            setattr(owner, name, original)
            evidence(variant, what)

    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def first(*args, **kwargs):
            noted(args, kwargs)
            return await original(*args, **kwargs)

    else:

        @functools.wraps(original)
        def first(*args, **kwargs):
            noted(args, kwargs)
            return original(*args, **kwargs)

    setattr(owner, name, first)


def defined_in(cls: type, name: str) -> type:
    """The class of `cls`'s MRO whose own namespace holds `name` (where the library defines it)."""
    return next(klass for klass in cls.__mro__ if name in vars(klass))


def role() -> str:
    """ "server" under bench.variant_serve, "worker" under bench.variant_worker, else "other"."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return {"bench.variant_serve": "server", "bench.variant_worker": "worker"}.get(getattr(spec, "name", ""), "other")


def apply(variants: frozenset[str], application) -> None:
    server = variants & SERVER.keys()
    if server:
        where = role()
        if where == "other":
            raise SystemExit(
                f"bench variant(s) {', '.join(sorted(server))} patch agentweb/serve.py: start Daphne with "
                "`python -m bench.variant_serve`, not `python -m agentweb.serve`"
            )
        if where == "server":
            for variant in sorted(server):
                SERVER_PATCHES[variant]()
                print(f"bench variant {variant} applied: {SERVER[variant]}", file=sys.stderr, flush=True)
    for variant in sorted(variants & APP.keys()):
        APP_PATCHES[variant](application)
        print(f"bench variant {variant} applied: {APP[variant]}", file=sys.stderr, flush=True)


# --- agentweb/serve.py ------------------------------------------------------------------------------------------


def stock_daphne_timers() -> None:
    """agentweb/adapters/daphne.py ReapingServer (AppServer's base): Daphne's own timeout_checker (every connection
    every 2 s), application_checker (a walk over every connection each second), protocol_disconnected and
    create_application (no reap callback; AppServer's send_now extension kept)."""
    from daphne.server import Server

    from agentweb.adapters.daphne import ReapingServer

    for name in ("timeout_checker", "application_checker", "protocol_disconnected", "create_application"):
        delattr(ReapingServer, name)
    on_first_call(Server, "timeout_checker", "stock-daphne-timers", "Daphne's timeout_checker ran")
    on_first_call(Server, "application_checker", "stock-daphne-timers", "Daphne's application_checker ran")


def stock_autobahn_io() -> None:
    """agentweb/adapters/autobahn.py DirectIO (mixed into AppWebSocketProtocol): autobahn's dataReceived and sendData
    (its debug line's arguments built per chunk and frame; Twisted's buffered write per frame), not agentweb's and
    not write_through."""
    import agentweb.serve as serve
    from agentweb.adapters.autobahn import DirectIO

    delattr(DirectIO, "dataReceived")
    delattr(DirectIO, "sendData")
    protocol = serve.AppWebSocketProtocol
    on_first_call(defined_in(protocol, "sendData"), "sendData", "stock-autobahn-io", "autobahn's sendData ran")
    on_first_call(
        defined_in(protocol, "dataReceived"), "dataReceived", "stock-autobahn-io", "autobahn's dataReceived ran"
    )


def no_send_now() -> None:
    """agentweb/serve.py: a websocket's scope gets no `agentweb.send_now` extension (the consumer reads
    delivery.take_now.SEND_NOW), so ChatConsumer sends every frame through Daphne's send coroutine, one at a time,
    and its take_now refuses every offer (it needs send_now)."""
    import agentweb.serve as serve
    from chat.consumers import ChatConsumer
    from delivery.take_now import SEND_NOW

    serve.SEND_NOW = "bench.no-send-now"
    on_first_call(
        ChatConsumer,
        "connect",
        "no-send-now",
        "a socket's consumer connected without send_now",
        check=lambda self: SEND_NOW not in self.scope.get("extensions", {}),
    )


def no_shared_frame() -> None:
    """agentweb/serve.py AppServer.frame_of: each socket's frame made for it (autobahn's prepareMessage per call),
    not once for every socket of the process."""
    import agentweb.serve as serve

    def frame_of(self, text):
        return self.ws_factory.prepareMessage(text.encode("utf8"))

    serve.AppServer.frame_of = frame_of
    on_first_call(serve.AppServer, "frame_of", "no-shared-frame", "a frame was made for one socket")


def stock_handshake() -> None:
    """agentweb/serve.py: the handshake's HTTP request kept for the socket's life (no forget_handshake_request,
    agentweb/adapters/twisted.py). (autobahn's options copied per connection are autobahn's own again in the app.)"""
    import agentweb.serve as serve

    def keep_handshake_request(channel) -> None:
        evidence("stock-handshake", "a handshake's HTTP request was kept")

    serve.forget_handshake_request = keep_handshake_request


def stock_http_channel() -> None:
    """agentweb/serve.py: Daphne's HTTP factory keeps Twisted's own HTTPChannel (what its `protocol` builds), not
    agentweb/http_channel.py's AppHTTPChannel."""
    import types

    from twisted.web.http import HTTPFactory

    import agentweb.serve as serve

    def build():
        evidence("stock-http-channel", "Twisted's own HTTPChannel took a connection")
        return HTTPFactory.protocol(None)  # what Twisted's HTTPFactory builds (its `protocol` ignores the factory)

    serve.AppHTTPChannel = types.SimpleNamespace(build=build)


SERVER_PATCHES = {
    "stock-daphne-timers": stock_daphne_timers,
    "stock-autobahn-io": stock_autobahn_io,
    "no-send-now": no_send_now,
    "no-shared-frame": no_shared_frame,
    "stock-handshake": stock_handshake,
    "stock-http-channel": stock_http_channel,
}


# --- the app ------------------------------------------------------------------------------------------------------


def stock_dispatch(application) -> None:
    """delivery/dispatch.py ReceivesInBatches: channels' AsyncConsumer.__call__ in its place (await_many_dispatch, a
    task and an asyncio.wait per message, one message per read, no taker registered)."""
    from channels.consumer import AsyncConsumer

    from delivery.dispatch import ReceivesInBatches

    ReceivesInBatches.__call__ = vars(AsyncConsumer)["__call__"]
    on_first_call(ReceivesInBatches, "__call__", "stock-dispatch", "channels' AsyncConsumer.__call__ ran")


def no_take_now(application) -> None:
    """delivery/take_now.py TakesNow: no consumer's taker is registered, so every message goes through its channel's
    queue and the consumer's loop (send_now still used by dispatch and a subscribe's texts)."""
    from delivery.take_now import TakesNow

    def take_now_for(self, channel, taker) -> None:
        evidence("no-take-now", "a consumer's taker was not registered")

    TakesNow.take_now_for = take_now_for


def _layer_settings(expect_redis: bool, variant: str):
    from channels.layers import channel_layers
    from django.conf import settings

    if bool(settings.REDIS_URL) != expect_redis:
        raise SystemExit(f"bench variant {variant}: its channel layer is not the one in use here (REDIS_URL)")
    if channel_layers.backends:
        raise SystemExit(f"bench variant {variant}: the channel layer was made before the variant could change it")
    return settings.CHANNEL_LAYERS["default"]


def stock_inmemory_layer(application) -> None:
    """agentweb/settings.py CHANNEL_LAYERS: channels' own InMemoryChannelLayer instead of delivery/memory_layer.py's
    (its clean-up walk on every send and receive, a task per group member, deep copies; no receive_many, no takers)."""
    from channels.layers import InMemoryChannelLayer

    layer = _layer_settings(False, "stock-inmemory-layer")
    layer["BACKEND"] = "channels.layers.InMemoryChannelLayer"
    on_first_call(
        InMemoryChannelLayer,
        "__init__",
        "stock-inmemory-layer",
        "channels' own InMemoryChannelLayer was made",
        check=lambda self, *a, **k: type(self) is InMemoryChannelLayer,
    )


def stock_redis_layer(application) -> None:
    """agentweb/settings.py CHANNEL_LAYERS: channels_redis's own RedisChannelLayer instead of delivery/redis_layer.py's
    (a read per message per socket, four round trips each; a group send per message; each join on a connection of
    its own; no takers). delivery/log.py's RedisLog then publishes with _PUBLISH and sends each event with
    group_send (its script cannot write channels_redis's sets: the layer has no `packs_msgpack`)."""
    from channels_redis.core import RedisChannelLayer

    from delivery.log import RedisLog

    layer = _layer_settings(True, "stock-redis-layer")
    layer["BACKEND"] = "channels_redis.core.RedisChannelLayer"
    layer["CONFIG"] = {k: v for k, v in layer["CONFIG"].items() if k != "process_capacity"}
    on_first_call(
        RedisChannelLayer,
        "__init__",
        "stock-redis-layer",
        "channels_redis's own RedisChannelLayer was made",
        check=lambda self, *a, **k: type(self) is RedisChannelLayer,
    )
    on_first_call(RedisLog, "_send", "stock-redis-layer", "the log's events went out by the layer's group_send")


def stock_http_handler(application) -> None:
    """agentweb/asgi.py: HTTP through Django's own ASGIHandler (a new thread per request's sync parts, three or four
    trips to it), not agentweb/http_handler.py's PooledThreadASGIHandler."""
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
    from django.core.handlers.asgi import ASGIHandler

    application.application_mapping["http"] = ASGIStaticFilesHandler(ASGIHandler())
    on_first_call(
        ASGIHandler,
        "__call__",
        "stock-http-handler",
        "Django's own ASGIHandler served a request",
        check=lambda self, *a, **k: type(self) is ASGIHandler,
    )


APP_PATCHES = {
    "stock-dispatch": stock_dispatch,
    "no-take-now": no_take_now,
    "stock-inmemory-layer": stock_inmemory_layer,
    "stock-redis-layer": stock_redis_layer,
    "stock-http-handler": stock_http_handler,
}
