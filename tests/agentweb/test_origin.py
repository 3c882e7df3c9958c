"""Which pages may open /ws/chat/ with a person's cookie: the Origin rule Django's CSRF check applies to POSTs."""

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from agentweb.origin import SameOriginValidator
from agentweb.socket_auth import SocketAuthMiddlewareStack
from chat.routing import websocket_urlpatterns
from tests.chat.conftest import session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


async def opens(owner, origin, *, host="127.0.0.1:8000", scheme="ws", **headers) -> bool:
    """Whether a socket opened with `owner`'s cookie from a page of `origin` is accepted."""
    cookie = await database_sync_to_async(session_cookie)(owner)
    sent = [(b"host", host.encode()), (b"cookie", cookie)]
    sent += [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    if origin is not None:
        sent.append((b"origin", origin.encode()))
    application = SameOriginValidator(SocketAuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=sent)
    communicator.scope["scheme"] = scheme
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


async def test_the_site_s_own_page_opens_it(owner):
    assert await opens(owner, "http://127.0.0.1:8000")


async def test_a_page_on_another_port_of_the_same_host_does_not(owner):
    assert not await opens(owner, "http://127.0.0.1:9999")


async def test_a_page_on_the_same_host_and_port_over_another_scheme_does_not(owner):
    assert not await opens(owner, "https://127.0.0.1:8000")


async def test_another_allowed_host_name_is_another_origin(owner):
    assert not await opens(owner, "http://localhost:8000")


async def test_a_handshake_without_an_origin_is_refused(owner):
    assert not await opens(owner, None)


async def test_a_host_that_is_not_allowed_is_refused_even_with_a_matching_origin(owner):
    assert not await opens(owner, "http://evil.example:8000", host="evil.example:8000")


async def test_over_tls_the_https_page_opens_it(owner):
    assert await opens(owner, "https://127.0.0.1:8000", scheme="wss")


async def test_behind_a_tls_proxy_its_scheme_header_decides(owner, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    assert await opens(owner, "https://127.0.0.1:8000", x_forwarded_proto="https")
    assert not await opens(owner, "http://127.0.0.1:8000", x_forwarded_proto="https")


async def test_a_trusted_origin_opens_it_whatever_the_host_header_says(owner, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://chat.example.com"]

    assert await opens(owner, "https://chat.example.com", host="127.0.0.1:8001")
    assert not await opens(owner, "https://chat.example.com:8443", host="127.0.0.1:8001")


async def test_a_trusted_wildcard_covers_subdomains_over_its_scheme_only(owner, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://*.example.com"]

    assert await opens(owner, "https://team.example.com", host="127.0.0.1:8001")
    assert not await opens(owner, "http://team.example.com", host="127.0.0.1:8001")
