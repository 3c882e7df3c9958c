"""MCP servers each person connects to: their calls go over the person's own connection, with the person's own
credentials, never over a shared one.

A server marked "each person connects" (McpServerConfig.per_person) has no shared connection. Each call names the
person it runs for (its ToolContext's user); the CredentialSource (the mcpconnect app: encrypted rows) gives that
person's credential, read again for every call, so a disconnect, a revocation or a deactivated account takes effect
on the next call in every process. The manager (tools/mcp/manager.py) keeps one connection per (server, person)
in this process, made with that person's credential: a header value, or an OAuth provider of the SDK over the
person's token storage (tools/mcp/oauth.py). A connection is reused only by the person it was made for, and only
while the credential's stamp (it changes on every connect) is the one it was made with.

When the person has not connected (or the server refuses their token and it cannot be refreshed), the call asks
them to connect (ToolContext.connect: the "Connect" card) and goes on once they have; without a way to ask, the
model reads why the tool did not run.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Protocol

import httpx2
import mcp_types as types

from tools.mcp.config import McpServerConfig
from tools.mcp.connection import McpUnavailable

__all__ = ["CredentialSource", "McpNeedsConnection", "PersonHeader", "PersonalCredential", "is_refusal"]


class McpNeedsConnection(McpUnavailable):
    """The call was not sent: the person has not connected their account to the server (or must again)."""


@dataclass(frozen=True)
class PersonalCredential:
    """One person's credential for one server. ``stamp`` changes each time they connect (not when a token is
    refreshed): a connection made with another stamp is not used."""

    stamp: str
    header_value: str = ""  # per_person "header"
    storage: object | None = None  # per_person "oauth": a tools.mcp.oauth.TimedTokenStorage
    redirect_uri: str = ""  # per_person "oauth": the app's callback address, as registered


class CredentialSource(Protocol):
    """Where the people's credentials are kept (mcpconnect/source.py). Async: called on any event loop."""

    async def credential(self, config: McpServerConfig, user_id: int) -> PersonalCredential | None:
        """The person's credential for the server, None when they have not connected."""
        ...

    async def refused(self, config: McpServerConfig, user_id: int, stamp: str) -> None:
        """The server refused the credential of ``stamp`` (and it could not be refreshed): forget it, so the
        person is asked to connect again."""
        ...

    async def remember_tools(self, config: McpServerConfig, tools: Sequence[types.Tool]) -> None:
        """A person's connection listed the server's tools: the list every run offers (not the person's)."""
        ...

    def known_tools(self, config: McpServerConfig) -> tuple[types.Tool, ...]:
        """Sync: the last list remembered (in any process), for a process none of whose people connected yet."""
        ...


class PersonHeader(httpx2.Auth):
    """A person's key, sent as the header ``name`` with every request; a 401 or 403 answer calls ``on_refused``
    (the SDK's transport turns it into a JSON-RPC error that no longer says which status it was)."""

    def __init__(self, name: str, value: str, on_refused: Callable[[], None] | None = None):
        self.name = name
        self.value = value
        self.on_refused = on_refused
        self.refused = False

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        request.headers[self.name] = self.value
        response = yield request
        if response.status_code in (401, 403):
            self.refused = True
            if self.on_refused is not None:
                self.on_refused()


def is_refusal(exc: BaseException | None) -> bool:
    """Whether a connection's failure is the server refusing the credential (HTTP 401 or 403)."""
    seen = 0
    stack = [exc]
    while stack and seen < 50:
        current = stack.pop()
        seen += 1
        if current is None:
            continue
        response = getattr(current, "response", None)
        if getattr(response, "status_code", None) in (401, 403):
            return True
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        stack.extend([current.__cause__, current.__context__])
    return False
