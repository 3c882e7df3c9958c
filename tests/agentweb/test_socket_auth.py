"""A websocket's session and user (agentweb/socket_auth.py), resolved as channels' AuthMiddlewareStack does."""

import pytest
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.testing import WebsocketCommunicator

from agentweb.socket_auth import SocketAuthMiddlewareStack
from tests.chat.conftest import session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


class WhoAmI(AsyncWebsocketConsumer):
    async def connect(self):
        await self.accept()
        user = self.scope["user"]
        await self.send(text_data=user.username if user.is_authenticated else "anonymous")
        await self.send(text_data=str(self.scope["session"].session_key))


def communicator(cookie: bytes | None) -> WebsocketCommunicator:
    headers = [(b"cookie", cookie)] if cookie else []
    return WebsocketCommunicator(SocketAuthMiddlewareStack(WhoAmI.as_asgi()), "/ws/", headers=headers)


async def test_a_signed_in_socket_has_its_user_and_session(owner):
    cookie = await database_sync_to_async(session_cookie)(owner)
    socket = communicator(cookie)
    await socket.connect()

    assert await socket.receive_from() == owner.username
    assert await socket.receive_from() == cookie.decode().split("=", 1)[1]
    await socket.disconnect()


async def test_a_socket_without_a_session_cookie_is_anonymous():
    socket = communicator(None)
    await socket.connect()

    assert await socket.receive_from() == "anonymous"
    await socket.disconnect()
