"""agentweb/adapters/mcp_oauth.py's contract with the SDK's OAuth client: the internals it reads or overrides (the
stored token's expiry, which the SDK forgets on load, and the time a token is refreshed)."""

import asyncio
import time

from mcp.shared.auth import OAuthToken

from agentweb.adapters.mcp_oauth import PersonalOAuth
from tests.support.library_contracts import at_its_pin, calls, has_method
from tools.mcp.oauth import provider_for_calls


def test_mcp_is_installed_at_its_pin():
    at_its_pin("mcp")


def test_the_providers_internals():
    from mcp.client.auth.oauth2 import OAuthClientProvider, OAuthContext

    has_method(OAuthClientProvider, "_initialize")
    calls(OAuthClientProvider, "_initialize", "storage.get_tokens", "storage.get_client_info")
    has_method(OAuthContext, "update_token_expiry", "token")
    has_method(OAuthContext, "is_token_valid")
    calls(OAuthContext, "is_token_valid", "token_expiry_time")
    calls(OAuthClientProvider, "_auth_flow", "can_refresh_token", "is_token_valid")
    calls(OAuthClientProvider, "_handle_token_response", "update_token_expiry")
    calls(OAuthClientProvider, "_handle_refresh_response", "update_token_expiry")
    assert issubclass(PersonalOAuth, OAuthClientProvider)


class Stored:
    def __init__(self, expires_in):
        self.expires = time.time() + expires_in

    async def get_tokens(self):
        return OAuthToken(access_token="a", refresh_token="r", expires_in=100)

    async def set_tokens(self, tokens):
        pass

    async def get_client_info(self):
        return None

    async def set_client_info(self, info):
        pass

    async def expires_at(self):
        return self.expires


def test_a_stored_token_is_refreshed_before_it_expires():
    expired = provider_for_calls("http://127.0.0.1:1/mcp", Stored(-5), "http://localhost/cb")
    soon = provider_for_calls("http://127.0.0.1:1/mcp", Stored(30), "http://localhost/cb")
    later = provider_for_calls("http://127.0.0.1:1/mcp", Stored(3600), "http://localhost/cb")
    for provider in (expired, soon, later):
        asyncio.run(provider._initialize())
    assert not expired.context.is_token_valid()  # the SDK alone would send it (it forgets the expiry on load)
    assert 14 < soon.context.token_expiry_time - time.time() < 16  # half its life left, when under the margin
    assert 3600 - 61 < later.context.token_expiry_time - time.time() < 3600 - 59
    later.context.update_token_expiry(OAuthToken(access_token="b", expires_in=600))  # as a refresh sets it
    assert 600 - 61 < later.context.token_expiry_time - time.time() < 600 - 59
