"""The SDK's TokenStorage (tools/mcp/oauth.py) over one person's McpConnection row: the tokens and the client
registration, encrypted at rest. Async (the SDK awaits it on the MCP loop); the database is reached through
``database_sync_to_async``.

Two uses:
- a person connecting (``connecting=True``): no token is offered (the sign-in starts afresh; the registration is
  kept), and the first tokens stored make the row connected with a new stamp (the connection is made:
  ``mcp_connection_changed`` "connect").
- a run's calls (``stamp``): a refreshed token is written only to the row of that stamp, so a person who
  disconnected meanwhile is not connected again by a refresh.
"""

from __future__ import annotations

import time

from channels.db import database_sync_to_async
from django.utils import timezone
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from .models import McpConnection, new_stamp
from .signals import changed


def db(function):
    """The database from the MCP loop's thread (or any loop), in a thread of the pool: never the thread-sensitive
    one, which a sync page waiting for the MCP loop holds (connecting: mcpconnect/flows.py)."""
    return database_sync_to_async(function, thread_sensitive=False)


class ConnectionStorage:
    def __init__(self, user_id: int, server: str, *, stamp: str | None = None, connecting: bool = False):
        self.user_id = user_id
        self.server = server
        self.stamp = stamp
        self.connecting = connecting

    def _row(self) -> McpConnection | None:
        rows = McpConnection.objects.filter(user_id=self.user_id, server=self.server, mode=McpConnection.Mode.OAUTH)
        if self.stamp is not None:
            rows = rows.filter(stamp=self.stamp, connected=True)
        return rows.first()

    async def get_tokens(self) -> OAuthToken | None:
        if self.connecting:
            return None
        row = await db(self._row)()
        if row is None or not isinstance(row.tokens, dict):
            return None
        return OAuthToken.model_validate(row.tokens)

    async def expires_at(self) -> float | None:
        row = await db(self._row)()
        return None if row is None else row.expires_at

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await db(self._store_tokens)(tokens)

    def _store_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + float(tokens.expires_in) if tokens.expires_in is not None else None
        values = {"tokens": tokens.model_dump(mode="json"), "expires_at": expires_at}
        if not self.connecting:
            rows = McpConnection.objects.filter(user_id=self.user_id, server=self.server, stamp=self.stamp)
            for row in rows:  # one at most; saved (not update()d) so that the encrypted field writes a token
                for name, value in values.items():
                    setattr(row, name, value)
                row.save(update_fields=[*values, "updated_at"])
            return
        row, _ = McpConnection.objects.get_or_create(
            user_id=self.user_id, server=self.server, defaults={"mode": McpConnection.Mode.OAUTH}
        )
        for name, value in values.items():
            setattr(row, name, value)
        row.mode = McpConnection.Mode.OAUTH
        row.header_value = ""
        row.stamp = new_stamp()
        row.connected = True
        row.connected_at = timezone.now()
        row.save()
        self.stamp = row.stamp
        changed(row.user, row.server, "connect")

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        row = await db(
            McpConnection.objects.filter(user_id=self.user_id, server=self.server, mode=McpConnection.Mode.OAUTH).first
        )()
        if row is None or not isinstance(row.client_info, dict):
            return None
        return OAuthClientInformationFull.model_validate(row.client_info)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await db(self._store_client)(client_info)

    def _store_client(self, client_info: OAuthClientInformationFull) -> None:
        row, created = McpConnection.objects.get_or_create(
            user_id=self.user_id,
            server=self.server,
            defaults={"mode": McpConnection.Mode.OAUTH, "connected": False},
        )
        if not created and row.mode != McpConnection.Mode.OAUTH:
            row.mode, row.connected, row.header_value = McpConnection.Mode.OAUTH, False, ""
        row.client_info = client_info.model_dump(mode="json", exclude_none=True)
        row.save()
