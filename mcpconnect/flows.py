"""A person connects their account to an MCP server each person connects to, or disconnects it. Sync: the pages
call these (mcpconnect/views.py); the work with the server runs on this process's MCP loop (tools/mcp/manager.py).

OAuth: ``start_oauth`` runs the SDK's flow (tools/mcp/oauth.py) on the MCP loop: discovery, registration, then the
authorization address, which the page sends the browser to; the flow then waits for the code. The authorization
server sends the browser back to the callback page, maybe in another process: ``finish_oauth`` puts the code in the
PendingAuthorization row the flow reads, and waits for the flow to end (the token exchanged, stored, the tools
listed with it). A key: ``connect_with_key`` tries it (the server's tools listed with it) before it is kept.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from dataclasses import replace
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

from django.db import transaction
from django.utils import timezone

from tools.mcp.config import McpServerConfig
from tools.mcp.connection import describe, list_tools_once
from tools.mcp.oauth import provider_for_connecting
from tools.mcp.personal import PersonHeader, is_refusal
from tools.services import groups_of, mcp_connections, mcp_server_configs

from .models import McpConnection, PendingAuthorization, new_stamp
from .signals import changed
from .source import DatabaseCredentials, redirect_uri, save_tools
from .storage import db

__all__ = [
    "ConnectFailed",
    "connect_with_key",
    "disconnect",
    "finish_oauth",
    "personal_servers",
    "remove_all",
    "start_oauth",
]


CODE_WAIT = 600.0  # seconds a sign-in waits for the person to come back from the authorization server
FINISH_WAIT = 60.0  # seconds the callback page waits for the token exchange and the first listing
POLL = 0.25
MAX_KEY_CHARS = 4000


class ConnectFailed(Exception):
    """What the person is told; nothing was kept."""


def personal_servers(user=None) -> list[McpServerConfig]:
    """The enabled servers each person connects to; with `user`, only those their groups may use (docs/teams.md,
    "Groups"): a server someone may not use is neither listed nor connected to."""
    configs = [config for config in mcp_server_configs() if config.enabled and config.per_person]
    if user is None:
        return configs
    groups = groups_of(user, stamp=None)
    return [config for config in configs if config.may_use(groups)]


def server_for(name: str, user) -> McpServerConfig | None:
    """The server `name` for `user` to connect to, if it is one they may use."""
    return next((config for config in personal_servers(user) if config.name == name), None)


# --- OAuth ------------------------------------------------------------------------------------


def start_oauth(user, config: McpServerConfig, *, next: str = "") -> str:
    """The authorization address to send the person's browser to. Raises ConnectFailed."""
    PendingAuthorization.objects.filter(created_at__lt=timezone.now() - timedelta(seconds=CODE_WAIT * 2)).delete()
    address: concurrent.futures.Future[str] = concurrent.futures.Future()
    flow_state: dict[str, str] = {}

    async def on_url(url: str) -> None:
        state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
        await db(PendingAuthorization.objects.create)(state=state, user_id=user.pk, server=config.name, next=next)
        flow_state["state"] = state
        address.set_result(url)

    async def wait_code(state: str) -> tuple[str, str | None]:
        deadline = time.monotonic() + CODE_WAIT
        while time.monotonic() < deadline:
            row = await db(PendingAuthorization.objects.filter(state=state).first)()
            if row is None:
                break
            if row.status == PendingAuthorization.Status.RECEIVED:
                if row.error or not row.code:
                    raise ConnectFailed(f"The authorization server said: {row.error or 'no code'}")
                return row.code, row.iss or None
            await asyncio.sleep(POLL)
        raise ConnectFailed("The sign-in was not finished in time.")

    async def flow() -> None:
        from .storage import ConnectionStorage

        storage = ConnectionStorage(user.pk, config.name, connecting=True)
        provider = provider_for_connecting(config.url, storage, redirect_uri(), on_url=on_url, wait_code=wait_code)
        try:
            tools = await list_tools_once(config, auth=provider)
            if storage.stamp is None:
                raise ConnectFailed("The server did not ask for a sign-in: it need not be one each person connects to.")
        except BaseException as exc:
            if "state" in flow_state:
                error = str(exc) if isinstance(exc, ConnectFailed) else describe(exc, config)
                await db(_end_pending)(flow_state["state"], PendingAuthorization.Status.FAILED, error)
            raise
        await DatabaseCredentials().remember_tools(config, tools)
        mcp_connections().learn_tools(config, tools)
        # The person's older connection in a process is not used again: it was made with another stamp.
        await db(_end_pending)(flow_state.get("state", ""), PendingAuthorization.Status.DONE, "")

    flow_done = mcp_connections().submit(flow())
    concurrent.futures.wait([address, flow_done], timeout=config.timeout, return_when="FIRST_COMPLETED")
    if address.done():
        return address.result()
    if flow_done.done():
        exc = flow_done.exception()
        raise ConnectFailed(str(exc) if isinstance(exc, ConnectFailed) else describe(exc or Exception(), config))
    flow_done.cancel()
    raise ConnectFailed(f"MCP server {config.name!r} did not answer within {config.timeout:g} s.")


def _end_pending(state: str, status: str, error: str) -> None:
    PendingAuthorization.objects.filter(state=state).update(status=status, error=error[:500], code="")


def finish_oauth(user, *, state: str, code: str, iss: str, error: str) -> PendingAuthorization:
    """The authorization server sent the person back: hand the code to the flow and wait for it to end. Returns
    the ended row (DONE, or FAILED with its error). Raises ConnectFailed for a callback not started by this person."""
    with transaction.atomic():
        row = (
            PendingAuthorization.objects.select_for_update()
            .filter(state=state[:200], user=user, status=PendingAuthorization.Status.WAITING)
            .first()
        )
        if row is None:
            raise ConnectFailed("This sign-in was not started by you here, or it is over: connect again.")
        row.status = PendingAuthorization.Status.RECEIVED
        row.code = code[:4000]
        row.iss = iss[:500]
        row.error = error[:500]
        row.save()
    deadline = time.monotonic() + FINISH_WAIT
    while time.monotonic() < deadline:
        row.refresh_from_db()
        if row.status in (PendingAuthorization.Status.DONE, PendingAuthorization.Status.FAILED):
            break
        time.sleep(POLL)
    else:
        row.status, row.error = PendingAuthorization.Status.FAILED, "The server did not finish the sign-in in time."
    PendingAuthorization.objects.filter(pk=row.pk).delete()
    return row


# --- a key ---------------------------------------------------------------------------------------


def connect_with_key(user, config: McpServerConfig, value: str) -> None:
    """Try the person's key on the server, then keep it (encrypted). Raises ConnectFailed, and nothing is kept."""
    value = (value or "").strip()
    if not value:
        raise ConnectFailed("Enter your key.")
    if len(value) > MAX_KEY_CHARS or any(c in value for c in "\r\n\0"):
        raise ConnectFailed(f"A key is one line of at most {MAX_KEY_CHARS} characters.")
    trial = replace(config, headers={**config.headers, config.person_header: value})  # its value masked in errors
    auth = PersonHeader(config.person_header, value)
    try:
        tools = mcp_connections().submit(list_tools_once(config, auth=auth)).result(config.timeout)
    except concurrent.futures.TimeoutError:
        raise ConnectFailed(f"MCP server {config.name!r} did not answer within {config.timeout:g} s.") from None
    except Exception as exc:
        if auth.refused or is_refusal(exc):
            raise ConnectFailed(f"MCP server {config.name!r} refused this key.") from None
        raise ConnectFailed(f"MCP server {config.name!r} could not be reached: {describe(exc, trial)}") from None
    with transaction.atomic():
        row, _ = McpConnection.objects.get_or_create(
            user=user, server=config.name, defaults={"mode": McpConnection.Mode.HEADER}
        )
        row.mode = McpConnection.Mode.HEADER
        row.header_value = value
        row.tokens = row.client_info = row.expires_at = None
        row.stamp = new_stamp()
        row.connected = True
        row.connected_at = timezone.now()
        row.save()
    save_tools(config.name, tools)
    mcp_connections().learn_tools(config, tools)
    changed(user, config.name, "connect")


# --- disconnecting -------------------------------------------------------------------------------


def disconnect(user, server: str) -> bool:
    """Forget the person's connection to ``server`` (its key or tokens); False when there was none."""
    deleted, _ = McpConnection.objects.filter(user=user, server=server).delete()
    mcp_connections().forget_person(server, user.pk)
    if deleted:
        changed(user, server, "disconnect")
    return bool(deleted)


def remove_all(user) -> None:
    """The account is deactivated: every connection of it is forgotten."""
    servers = list(McpConnection.objects.filter(user=user).values_list("server", flat=True))
    McpConnection.objects.filter(user=user).delete()
    PendingAuthorization.objects.filter(user=user).delete()
    mcp_connections().forget_person(None, user.pk)
    for server in servers:
        changed(user, server, "disconnect")
