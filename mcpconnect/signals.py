"""``mcp_connection_changed(sender, user, server, action)``: a person connected their account to an MCP server
(``action`` "connect"), disconnected it or had it removed (their account deactivated: "disconnect"), or the server
refused its token, which could not be refreshed ("revoke"). Sent after the change is saved; for the audit log."""

from __future__ import annotations

from django.dispatch import Signal

__all__ = ["ACTIONS", "changed", "mcp_connection_changed"]

ACTIONS = ("connect", "disconnect", "revoke")

mcp_connection_changed = Signal()


def changed(user, server: str, action: str) -> None:
    assert action in ACTIONS, action
    mcp_connection_changed.send(sender=None, user=user, server=server, action=action)
