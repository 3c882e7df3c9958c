"""An MCP server of the official SDK protected by OAuth, with its own small authorization server (the SDK's
mcp.server.auth: protected-resource metadata, authorization-server metadata, dynamic client registration, PKCE,
refresh, revocation), run by the tests as a process over streamable HTTP:

    python oauth_server.py PORT

- /login: the authorization server's sign-in page: a form asking for the account name (no password: a test's);
  the code it gives is for that account.
- The tool `whoami` answers with the account of the token the call came with, and writes `whoami <account>` to
  $MCP_TEST_RECORD.
- Access tokens live $TOKEN_SECONDS (default 3600); refresh tokens rotate. A static key `key-<account>` is also
  accepted as a bearer token (the tests of "each person enters a key").
- /test/revoke?account=NAME revokes every token of the account; /test/stats counts registrations, codes issued,
  refreshes and refused tokens.
"""

from __future__ import annotations

import html
import os
import secrets
import sys
import time

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
BASE = f"http://127.0.0.1:{PORT}"
TOKEN_SECONDS = int(os.environ.get("TOKEN_SECONDS", "3600"))
STATS = {"registrations": 0, "codes": 0, "refreshes": 0, "refused": 0}


def record(line: str) -> None:
    path = os.environ.get("MCP_TEST_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


class Provider:
    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, tuple[str, AuthorizationParams]] = {}  # login id -> (client id, params)
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        STATS["registrations"] += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        login = secrets.token_urlsafe(16)
        self.pending[login] = (client.client_id, params)
        return f"{BASE}/login?login={login}"

    def sign_in(self, login: str, account: str) -> str:
        client_id, params = self.pending.pop(login)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=account,
        )
        STATS["codes"] += 1
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], subject: str, resource: str | None) -> OAuthToken:
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        expires = int(time.time()) + TOKEN_SECONDS
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource, subject=subject
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject
        )
        return OAuthToken(
            access_token=access,
            expires_in=TOKEN_SECONDS,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(
            client.client_id, authorization_code.scopes, authorization_code.subject or "", authorization_code.resource
        )

    async def load_refresh_token(self, client, refresh_token: str) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)  # rotated
        STATS["refreshes"] += 1
        return self._issue(
            client.client_id, scopes or refresh_token.scopes, refresh_token.subject or "", refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        if token.startswith("key-"):
            return AccessToken(token=token, client_id="static-key", scopes=[], subject=token[4:])
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            STATS["refused"] += 1
            return None
        return found

    async def revoke_token(self, token) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def revoke_account(self, account: str) -> int:
        gone = [t for t, a in self.access.items() if a.subject == account]
        gone += [t for t, r in self.refresh.items() if r.subject == account]
        for token in gone:
            self.access.pop(token, None)
            self.refresh.pop(token, None)
        return len(gone)


provider = Provider()
server = MCPServer(
    "agentweb-oauth-test-server",
    version="0.1.0",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,
        resource_server_url=f"{BASE}/mcp",
        client_registration_options=ClientRegistrationOptions(enabled=True),
        revocation_options=RevocationOptions(enabled=True),
        validate_token_resource=False,
    ),
)


@server.tool()
def whoami() -> str:
    """The account this call acts for."""
    token = get_access_token()
    account = token.subject if token is not None else "nobody"
    record(f"whoami {account}")
    return f"you are {account}"


@server.custom_route("/login", methods=["GET", "POST"])
async def login(request: Request) -> Response:
    if request.method == "GET":
        login_id = html.escape(request.query_params.get("login", ""))
        return HTMLResponse(
            "<!doctype html><title>Test sign-in</title><form method=post>"
            f"<input type=hidden name=login value='{login_id}'>"
            "<label>Account <input name=account id=account></label><button type=submit>Sign in</button></form>"
        )
    form = await request.form()
    login_id, account = str(form.get("login", "")), str(form.get("account", ""))
    if login_id not in provider.pending or not account:
        return HTMLResponse("unknown sign-in", status_code=400)
    return RedirectResponse(provider.sign_in(login_id, account), status_code=302)


@server.custom_route("/test/revoke", methods=["POST"])
async def revoke(request: Request) -> Response:
    return JSONResponse({"revoked": provider.revoke_account(request.query_params.get("account", ""))})


@server.custom_route("/test/stats", methods=["GET"])
async def stats(request: Request) -> Response:
    return JSONResponse(STATS)


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=PORT)
