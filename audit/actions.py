"""What the audit log records: a fixed set of actions, and which of them fail closed (docs/teams.md, "Audit log")."""

from __future__ import annotations

from django.db import models


class Action(models.TextChoices):
    SIGNIN = "signin", "signed in"
    SIGNIN_FAILED = "signin.failed", "sign-in failed"
    SIGNOUT = "signout", "signed out"
    API_KEY_CREATED = "api_key.created", "API key made"
    API_KEY_REVOKED = "api_key.revoked", "API key revoked"
    ADMIN_ADDED = "admin.added", "admin: added"
    ADMIN_CHANGED = "admin.changed", "admin: changed"
    ADMIN_DELETED = "admin.deleted", "admin: deleted"
    APPROVAL_APPROVED = "approval.approve", "call approved"
    APPROVAL_EDITED = "approval.edit", "call edited and approved"
    APPROVAL_REJECTED = "approval.reject", "call rejected"
    APPROVAL_REPLIED = "approval.respond", "call answered instead"
    SHARE_LINK_CREATED = "share_link.created", "share link made"
    SHARE_LINK_REVOKED = "share_link.revoked", "share link revoked"
    MCP_CONNECTED = "mcp.connected", "MCP server connected"
    MCP_DISCONNECTED = "mcp.disconnected", "MCP server disconnected"
    MCP_CHANGED = "mcp.changed", "MCP connection changed"
    AUDIT_EXPORTED = "audit.exported", "audit log exported"
    AUDIT_PRUNED = "audit.pruned", "audit log pruned"


#: Actions that go through even when their row cannot be written (the failure is logged as an error): each one takes
#: access away or only notes a refusal, and refusing a sign-out or a revocation because the log failed would leave
#: access in place that the person meant to end. Every other action fails closed: its row is written in the
#: action's own transaction, so an action that gives or uses access never happens without its row.
FAIL_OPEN = frozenset(
    {
        Action.SIGNIN_FAILED,
        Action.SIGNOUT,
        Action.API_KEY_REVOKED,
        Action.SHARE_LINK_REVOKED,
        Action.MCP_DISCONNECTED,
        Action.AUDIT_PRUNED,
    }
)

#: A decision on a waiting call (ToolCallDecision.Decision's values) and its action.
DECISIONS = {
    "approve": Action.APPROVAL_APPROVED,
    "edit": Action.APPROVAL_EDITED,
    "reject": Action.APPROVAL_REJECTED,
    "respond": Action.APPROVAL_REPLIED,
}
