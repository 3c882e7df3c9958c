"""The people's credentials as the MCP connections ask for them (tools/mcp/personal.py CredentialSource): read
from the database for every call, so that a disconnect, a revocation or a deactivated account holds at once in
every process."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import mcp_types as types
from django.conf import settings
from django.urls import reverse
from pydantic import ValidationError

from tools.mcp.config import McpServerConfig
from tools.mcp.personal import PersonalCredential

from .models import McpConnection, ServerTools
from .signals import changed
from .storage import ConnectionStorage, db

log = logging.getLogger("agentweb.tools.mcp")

MAX_TOOLS_KEPT = 1000


def redirect_uri() -> str:
    """Where authorization servers send the browser back (the address to register where registration is by hand)."""
    return settings.AGENTWEB_PUBLIC_URL + reverse("mcpconnect:callback")


def connection_of(config: McpServerConfig, user_id: int) -> McpConnection | None:
    """The person's usable connection to the server (an active account, the mode the server has now)."""
    return (
        McpConnection.objects.filter(
            user_id=user_id, user__is_active=True, server=config.name, mode=config.per_person, connected=True
        )
        .select_related("user")
        .first()
    )


class DatabaseCredentials:
    async def credential(self, config: McpServerConfig, user_id: int) -> PersonalCredential | None:
        row = await db(connection_of)(config, user_id)
        if row is None:
            return None
        if config.per_person == "header":
            if not isinstance(row.header_value, str) or not row.header_value:
                return None  # unreadable with AGENTWEB_SECRET_KEYS: asked again
            return PersonalCredential(stamp=row.stamp, header_value=row.header_value)
        if not isinstance(row.tokens, dict):
            return None
        storage = ConnectionStorage(user_id, config.name, stamp=row.stamp)
        return PersonalCredential(stamp=row.stamp, storage=storage, redirect_uri=redirect_uri())

    async def refused(self, config: McpServerConfig, user_id: int, stamp: str) -> None:
        await db(revoke)(config.name, user_id, stamp)

    async def remember_tools(self, config: McpServerConfig, tools: Sequence[types.Tool]) -> None:
        await db(save_tools)(config.name, tools)

    def known_tools(self, config: McpServerConfig) -> tuple[types.Tool, ...]:
        row = ServerTools.objects.filter(server=config.name).first()
        if row is None or not isinstance(row.tools, list):
            return ()
        found = []
        for item in row.tools:
            try:
                found.append(types.Tool.model_validate(item))
            except ValidationError:
                log.warning("MCP server %s: a remembered tool cannot be read", config.name)
        return tuple(found)


def save_tools(server: str, tools: Sequence[types.Tool]) -> None:
    listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools[:MAX_TOOLS_KEPT]]
    ServerTools.objects.update_or_create(server=server, defaults={"tools": listed})


def revoke(server: str, user_id: int, stamp: str) -> None:
    """The server refused the person's token (and it could not be refreshed): forgotten, asked again."""
    row = McpConnection.objects.filter(user_id=user_id, server=server, stamp=stamp, connected=True).first()
    if row is None:
        return
    row.connected = False
    row.tokens = None
    row.expires_at = None
    row.header_value = ""
    row.save()
    log.info("MCP server %s refused the account of person %s: asked to connect again", server, user_id)
    changed(row.user, server, "revoke")
