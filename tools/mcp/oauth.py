"""OAuth 2.1 for MCP servers each person connects to, through the official SDK's client (mcp.client.auth).

The SDK's ``OAuthClientProvider`` is an httpx auth that does what the MCP authorization specification asks:
protected-resource metadata (from the 401's WWW-Authenticate, then the well-known addresses), authorization-server
metadata, dynamic client registration where the server offers it, the authorization code with PKCE (S256) and the
resource indicator, the token exchange, and refreshing. The app gives it a TokenStorage per (person, server)
(mcpconnect/storage.py: encrypted rows) and two ways to use it:

- ``authorize``: a person connects (a page of the app). The SDK's redirect handler hands the authorization address
  to the page, which sends the browser there; its callback handler waits for the code the app's callback page
  receives (in any process: ``wait_code`` reads it from the database). It ends with the MCP server's tool list,
  read with the new token.
- ``provider_for_calls``: a run's calls. Nobody can be sent anywhere mid-call: when the SDK would start the
  authorization again (the token was refused and could not be refreshed), ``NeedsAuthorization`` is raised, and
  the call asks the person to connect again (the "Connect" card).

What this uses of the SDK beyond its public API is in agentweb/adapters/mcp_oauth.py (PersonalOAuth: the stored
token's expiry, refreshing early), checked by tests/agentweb/adapters/test_mcp_oauth.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from mcp.client.auth import AuthorizationCodeResult, TokenStorage
from mcp.shared.auth import OAuthClientMetadata

from agentweb.adapters.mcp_oauth import REFRESH_MARGIN, PersonalOAuth

__all__ = [
    "REFRESH_MARGIN",
    "NeedsAuthorization",
    "PersonalOAuth",
    "TimedTokenStorage",
    "client_metadata",
    "provider_for_calls",
    "provider_for_connecting",
]

CLIENT_NAME = "agentweb"


class NeedsAuthorization(Exception):
    """The person's token was refused and could not be refreshed: they must connect (authorize) again."""


class TimedTokenStorage(TokenStorage, Protocol):
    """A TokenStorage that also knows when its access token expires (time.time(); None: not said)."""

    async def expires_at(self) -> float | None: ...


def client_metadata(redirect_uri: str) -> OAuthClientMetadata:
    """What the app registers itself as (dynamic client registration): the authorization code (with PKCE) and
    refresh token grants and the app's callback address; the server picks how the client authenticates (the secret
    it may issue is kept encrypted with the registration)."""
    return OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        application_type="web",
    )


def provider_for_calls(
    url: str, storage: TimedTokenStorage, redirect_uri: str, *, on_refused: Callable[[], None] | None = None
) -> PersonalOAuth:
    """The auth of a person's connection for calls: refreshes, never starts an authorization (NeedsAuthorization,
    after ``on_refused()``)."""

    async def cannot_redirect(authorization_url: str) -> None:
        if on_refused is not None:
            on_refused()
        raise NeedsAuthorization("the MCP server asks this person to authorize again")

    async def no_callback() -> AuthorizationCodeResult:  # never reached: cannot_redirect raised
        raise NeedsAuthorization("the MCP server asks this person to authorize again")

    return PersonalOAuth(
        url,
        client_metadata(redirect_uri),
        storage=storage,
        redirect_handler=cannot_redirect,
        callback_handler=no_callback,
    )


def provider_for_connecting(
    url: str,
    storage: TimedTokenStorage,
    redirect_uri: str,
    *,
    on_url: Callable[[str], Awaitable[None]],
    wait_code: Callable[[str], Awaitable[tuple[str, str | None]]],
) -> PersonalOAuth:
    """The auth of a person's connecting: ``on_url(authorization address)`` sends the browser there (the address
    carries the ``state`` the callback is matched by); ``wait_code(state)`` returns the callback's (code, iss)."""
    state: dict[str, str] = {}

    async def redirect(authorization_url: str) -> None:
        from urllib.parse import parse_qs, urlsplit

        state["value"] = (parse_qs(urlsplit(authorization_url).query).get("state") or [""])[0]
        await on_url(authorization_url)

    async def callback() -> AuthorizationCodeResult:
        code, iss = await wait_code(state.get("value", ""))
        return AuthorizationCodeResult(code=code, state=state.get("value"), iss=iss)

    return PersonalOAuth(
        url, client_metadata(redirect_uri), storage=storage, redirect_handler=redirect, callback_handler=callback
    )
