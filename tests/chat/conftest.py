import asyncio
import json
import uuid

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client as DjangoClient

from agentweb.socket_auth import SocketAuthMiddlewareStack
from chat.routing import websocket_urlpatterns
from chat.runs import runs_here
from providers.client import close_http_client
from tests.support.views import check_frame

TERMINAL = {"run.completed", "run.failed", "run.cancelled"}


def session_cookie(user) -> bytes:
    """The cookie header of a real login of `user` (the session is in the database, as after the form)."""
    http = DjangoClient()
    http.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={http.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


class Client:
    """A websocket client of /ws/chat/ as one logged-in user, through the real session middleware."""

    def __init__(self, cookie: bytes):
        application = SocketAuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        self.communicator = WebsocketCommunicator(application, "/ws/chat/", headers=[(b"cookie", cookie)])

    async def connect(self):
        connected, _ = await self.communicator.connect()
        assert connected
        return self

    async def send(self, **frame):
        await self.communicator.send_to(text_data=json.dumps(frame))

    async def send_raw(self, text: str):
        await self.communicator.send_to(text_data=text)

    async def receive(self, timeout: float = 5) -> dict:
        """The next frame, which must fit the shape chat/live/views.py declares for it (docs/protocol.md)."""
        return check_frame(json.loads(await self.communicator.receive_from(timeout=timeout)))

    async def ask(self, content: str, thread: str | None = None, **extra) -> str:
        client_msg_id = extra.pop("client_msg_id", str(uuid.uuid4()))
        await self.send(type="message.send", thread=thread, content=content, client_msg_id=client_msg_id, **extra)
        return client_msg_id

    async def until(self, *types: str, timeout: float = 10) -> list[dict]:
        """Every event up to and including the first of `types`."""
        events = []
        while True:
            event = await self.receive(timeout=timeout)
            events.append(event)
            if event["type"] in types:
                return events

    async def run_to_end(self) -> list[dict]:
        return await self.until(*TERMINAL)

    async def close(self):
        # A receive that timed out has cancelled the application already (asgiref's communicator): nothing is left
        # to disconnect, and the CancelledError disconnect() would raise stops pytest's teardown of everything after
        # it (the database flush, every monkeypatch), so one failing test would fail the rest of the run.
        if self.communicator.future.done():
            return
        await self.communicator.disconnect()


@pytest.fixture
async def connect():
    clients = []

    async def make(user) -> Client:
        client = await Client(await database_sync_to_async(session_cookie)(user)).connect()
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()
    # A run still going at the end of a test must not leak into the next one.
    for active in list(runs_here().active.values()):
        active.task.cancel()
    await asyncio.gather(*(a.task for a in list(runs_here().active.values())), return_exceptions=True)


@pytest.fixture
def calculator_needs_approval(db):
    """The admin's registry row says the calculator's calls wait for a person. Returns the row."""
    from tools.models import ToolSetting
    from tools.services import sync_tool_settings

    sync_tool_settings()
    # The update changes the settings stamp (a trigger: tools/settings_cache.py): runs build their tools afresh.
    ToolSetting.objects.filter(name="calculator").update(requires_approval=True)
    return ToolSetting.objects.get(name="calculator")


@pytest.fixture(autouse=True)
async def close_the_shared_http_client():
    """Each test runs its own event loop: the providers' shared client of that loop is closed with it."""
    yield
    await close_http_client()
