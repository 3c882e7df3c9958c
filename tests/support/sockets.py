"""A websocket client of /ws/chat/ as the page is one: the session cookie of a real login, the app's Origin."""

from __future__ import annotations

import asyncio
import json

from websockets.asyncio.client import connect

from tests.support.views import check_frame


class ChatSocket:
    def __init__(self, base_url: str, cookie: str):
        self.url = base_url.replace("http://", "ws://") + "/ws/chat/"
        self.origin = base_url
        self.cookie = cookie

    async def __aenter__(self) -> ChatSocket:
        # No message size limit, as in a browser (the websockets library's default is 1 MiB).
        self.connection = await connect(
            self.url, additional_headers={"Cookie": self.cookie}, origin=self.origin, max_size=None
        )
        return self

    async def __aexit__(self, *exc) -> None:
        await self.connection.close()

    async def send(self, **frame) -> None:
        await self.connection.send(json.dumps(frame))

    async def until(self, *types: str, timeout: float = 30) -> list[dict]:
        """The events received until one of `types` (included), each fitting its shape (chat/live/views.py)."""
        events: list[dict] = []
        while not events or events[-1]["type"] not in types:
            events.append(check_frame(json.loads(await asyncio.wait_for(self.connection.recv(), timeout))))
        return events
