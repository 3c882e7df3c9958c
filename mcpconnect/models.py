"""People's own connections to the MCP servers each person connects to (docs/mcp.md, docs/teams.md).

A server is named by its name (an admin row or a server of AGENTWEB_MCP_CONFIG): a connection outlives a change of
the row, and is forgotten when the server's way of connecting changes (mcpconnect/source.py reads only the rows of
the mode the server has now). Every secret is encrypted at rest (agentweb/fields.py): the key a person entered, the
OAuth tokens, the client registration (it may hold a client secret), and an authorization code while it waits.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from agentweb.fields import EncryptedJSONField, EncryptedTextField


def new_stamp() -> str:
    return secrets.token_hex(16)


class McpConnection(models.Model):
    """One person's account at one MCP server: a key they entered, or the OAuth tokens of their sign-in."""

    class Mode(models.TextChoices):
        OAUTH = "oauth", "OAuth sign-in"
        HEADER = "header", "a key"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_connections")
    server = models.CharField(max_length=40)
    mode = models.CharField(max_length=8, choices=Mode.choices)
    # Changes each time the person connects (not when a token is refreshed): a process's connection made with
    # another stamp is not used again (tools/mcp/personal.py).
    stamp = models.CharField(max_length=32, default=new_stamp)
    # False while an OAuth sign-in is under way, and once the server refused the token (the person connects again).
    connected = models.BooleanField(default=False)
    header_value = EncryptedTextField(blank=True)
    tokens = EncryptedJSONField(null=True, blank=True)  # the SDK's OAuthToken, as JSON
    expires_at = models.FloatField(null=True, blank=True)  # time.time() the access token expires; not secret
    client_info = EncryptedJSONField(null=True, blank=True)  # the dynamic client registration
    connected_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "server"], name="mcpconnect_one_per_person_server")]
        ordering = ["server"]
        verbose_name = _("person's MCP connection")

    def __str__(self) -> str:
        return f"{self.server} ({self.user_id})"


class PendingAuthorization(models.Model):
    """An OAuth sign-in under way: made when the browser is sent to the authorization server (its `state`), given
    the code by the callback page (in any process), read by the flow waiting for it (mcpconnect/flows.py)."""

    class Status(models.TextChoices):
        WAITING = "waiting"  # for the callback
        RECEIVED = "received"  # the callback brought a code (or an error)
        DONE = "done"
        FAILED = "failed"

    state = models.CharField(max_length=200, primary_key=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    server = models.CharField(max_length=40)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WAITING)
    code = EncryptedTextField(blank=True)
    iss = models.CharField(max_length=500, blank=True)
    error = models.CharField(max_length=500, blank=True)
    next = models.CharField(max_length=20, blank=True)  # "close": the page says the tab may be closed
    created_at = models.DateTimeField(auto_now_add=True)


class ServerTools(models.Model):
    """The tool list a person's connection last saw, for every process (no tool list is personal: every person is
    offered the same tools; their results and their credentials are theirs)."""

    server = models.CharField(max_length=40, unique=True)
    tools = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)
