"""The events that Django and other apps announce by signal: sign-in, sign-out and failed sign-in (Django's
signals, which the password form and the OpenID Connect sign-in both send), the admin's own log, and a person's MCP
connections (mcpconnect's signal: the log listens, the MCP credentials know nothing of it)."""

from __future__ import annotations

from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.db.models.signals import post_save

from mcpconnect.signals import mcp_connection_changed as mcp_connection_signal

from .actions import Action
from .admin_log import mirror
from .recording import Target, client_ip, record

#: The dispatch ids the receivers are connected with: connecting twice (a test reloading the app) stays one.
UID = "audit"


def connect() -> None:
    user_logged_in.connect(signed_in, dispatch_uid=f"{UID}.signed_in")
    user_logged_out.connect(signed_out, dispatch_uid=f"{UID}.signed_out")
    user_login_failed.connect(signin_failed, dispatch_uid=f"{UID}.signin_failed")
    post_save.connect(admin_log_saved, sender=LogEntry, dispatch_uid=f"{UID}.admin_log")
    mcp_connection_signal.connect(mcp_connection_changed, dispatch_uid=f"{UID}.mcp")


def signed_in(sender, request, user, **kwargs) -> None:
    # Fails closed: when the row cannot be written the sign-in's request fails, and Django does not save the session
    # of a response that failed (500), so nobody is signed in unrecorded.
    backend = getattr(user, "backend", "") or ""
    record(Action.SIGNIN, actor=user, target=user, ip=client_ip(request), detail={"backend": backend})


def signed_out(sender, request, user, **kwargs) -> None:
    if user is None or not getattr(user, "is_authenticated", False):
        return  # signing out with no one signed in: nothing happened
    record(Action.SIGNOUT, actor=user, target=user, ip=client_ip(request))


def signin_failed(sender, credentials, request=None, **kwargs) -> None:
    """The username that was tried (Django has masked the password in `credentials` already; only the username is
    read, whatever else the backend was given)."""
    field = get_user_model().USERNAME_FIELD
    tried = credentials.get(field) or credentials.get("username") or ""
    label = tried if isinstance(tried, str) else ""
    record(Action.SIGNIN_FAILED, target=Target("user", "", label), ip=client_ip(request))


def admin_log_saved(sender, instance: LogEntry, created: bool, raw: bool = False, **kwargs) -> None:
    if created and not raw:
        mirror(instance)


#: An MCP connection's change, as its sender names it, and its action; any other change is recorded as MCP_CHANGED.
MCP_CHANGES = {
    "connected": Action.MCP_CONNECTED,
    "connect": Action.MCP_CONNECTED,
    "disconnected": Action.MCP_DISCONNECTED,
    "disconnect": Action.MCP_DISCONNECTED,
    "revoked": Action.MCP_DISCONNECTED,
    "removed": Action.MCP_DISCONNECTED,
}


def mcp_connection_changed(sender, user, server, action, **kwargs) -> None:
    """Receiver of `mcp_connection_changed(sender, user, server, action)`: a person connected an MCP server with their
    own credentials, or the connection ended. `server` is the server's row (or its name). Neither the token nor
    anything of the provider's answer is recorded."""
    change = str(action)[:32]
    target = server if hasattr(server, "_meta") else Target("mcpservers.mcpserver", "", str(server))
    record(MCP_CHANGES.get(change, Action.MCP_CHANGED), actor=user, target=target, detail={"change": change})
