"""What agentweb relies on inside the MCP SDK's OAuth client (mcp.client.auth.OAuthClientProvider), pinned in
requirements.txt and checked by tests/agentweb/adapters/test_mcp_oauth.py. tools/mcp/oauth.py uses it.

`PersonalOAuth`: the SDK's provider, with two changes.
- `_initialize` (which loads the stored tokens) also sets the stored token's expiry: the SDK forgets it on load,
  so a token stored by another process (or before a restart) would be sent expired, refused with 401, and the SDK
  would start a whole new authorization (the person asked to sign in again) instead of refreshing it.
- `context.update_token_expiry` puts the expiry REFRESH_MARGIN seconds early (half the token's life when that is
  shorter): the SDK refreshes a token once `time.time()` is past its expiry, so it is refreshed before the
  authorization server would refuse it rather than after.

Buys: a person stays connected across processes and restarts for as long as their refresh token lives.
"""

from __future__ import annotations

import time
from typing import Any

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthToken

__all__ = ["REFRESH_MARGIN", "PersonalOAuth"]

REFRESH_MARGIN = 60.0  # seconds before a token's expiry it is refreshed (or its lifetime's half, when shorter)


def _early(expires_in: Any) -> float | None:
    """The time to refresh a token that lives ``expires_in`` seconds from now."""
    if expires_in is None:
        return None
    seconds = float(expires_in)
    return time.time() + seconds - min(REFRESH_MARGIN, seconds / 2)


class PersonalOAuth(OAuthClientProvider):
    """The SDK's provider, knowing the stored token's expiry and refreshing it early (see the module's text).
    ``storage`` also has ``async expires_at() -> float | None`` (tools/mcp/oauth.py TimedTokenStorage)."""

    def __init__(self, *args: Any, storage: Any, **kwargs: Any):
        super().__init__(*args, storage=storage, **kwargs)
        self._timed_storage = storage
        self.context.update_token_expiry = self._update_expiry  # type: ignore[method-assign]

    def _update_expiry(self, token: OAuthToken) -> None:
        self.context.token_expiry_time = _early(token.expires_in)

    async def _initialize(self) -> None:
        await super()._initialize()
        expires_at = await self._timed_storage.expires_at()
        if self.context.current_tokens is not None and expires_at is not None:
            self.context.token_expiry_time = _early(max(expires_at - time.time(), 0.0))
