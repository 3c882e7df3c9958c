"""An MCP server configured in the admin. Secret values (the stdio server's environment, the HTTP headers) are
encrypted at rest like HTTP tools' headers (agentweb/fields.py). The headers are pinned to the origin of the URL
(agentweb/pinned_secrets.py); the environment is not pinned to the command: only a superuser changes a server, and a
superuser who may run any command as the app can have it hand over its environment anyway."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from agentweb.fields import EncryptedJSONField
from agentweb.pinned_secrets import PinnedSecrets, PinnedSecretsQuerySet
from agentweb.secretbox import UnreadableSecret
from providers.secrets import origin
from tools.mcp.config import DEFAULT_TIMEOUT, MAX_TIMEOUT, McpConfigError, McpServerConfig


class McpServer(PinnedSecrets):
    ADDRESS_FIELDS = ("url",)
    PINNED_SECRETS = {"headers": dict}

    class Transport(models.TextChoices):
        STDIO = "stdio", "stdio (a command run on this server)"
        HTTP = "http", "streamable HTTP"

    name = models.CharField(
        max_length=40,
        unique=True,
        help_text=_(
            "Starts the name of each of its tools (<name>__<tool>): letters, digits, '_' or '-', no '_' "
            "first or last and no '__'."
        ),
    )
    transport = models.CharField(max_length=8, choices=Transport.choices, default=Transport.STDIO)
    command = models.CharField(max_length=500, blank=True, help_text=_("stdio: the program to run, e.g. npx or uvx."))
    args = models.JSONField(default=list, blank=True, help_text=_('stdio: its arguments, e.g. ["-y", "server-name"].'))
    # stdio: the server's whole environment besides PATH. Names and values are secret (tokens often live here).
    env = EncryptedJSONField(default=dict, blank=True)
    url = models.CharField(
        _("URL"), max_length=2000, blank=True, help_text=_("streamable HTTP: the server's endpoint.")
    )
    headers = EncryptedJSONField(default=dict, blank=True)  # streamable HTTP: sent with every request; secret
    enabled = models.BooleanField(default=True)
    timeout = models.FloatField(
        default=DEFAULT_TIMEOUT,
        validators=[MinValueValidator(0.1), MaxValueValidator(MAX_TIMEOUT)],
        help_text=_("Seconds for one call (and for connecting)."),
    )
    offered_tools = models.JSONField(
        null=True,
        blank=True,
        help_text=_(
            'The server\'s own tool names the model is offered, e.g. ["search", "fetch"]. Empty: all of '
            "them. Offer fewer when its tools take too much of the model's context."
        ),
    )
    require_approval = models.BooleanField(
        default=True, help_text=_("Every call of its tools waits for a person's approval (but the exempt ones).")
    )
    approval_exempt = models.JSONField(
        default=list, blank=True, help_text=_('Its own tool names that run without approval, e.g. ["search"].')
    )

    class PerPerson(models.TextChoices):
        SHARED = "", "no: one connection for everyone (its headers)"
        OAUTH = "oauth", "yes, each person signs in (OAuth)"
        HEADER = "header", "yes, each person enters a key (a header)"

    per_person = models.CharField(
        _("each person connects"),
        max_length=8,
        choices=PerPerson.choices,
        default=PerPerson.SHARED,
        blank=True,
        help_text=_(
            "Streamable HTTP only. Each person's calls go with their own account: signed in with OAuth as the "
            "MCP authorization specification says, or with a key they enter (sent as the header below). A person who "
            "has not connected is asked to when a run calls one of its tools."
        ),
    )
    person_header = models.CharField(
        _("person's header"),
        max_length=100,
        blank=True,
        help_text=_(
            'Each person enters a key: the header it is sent as, e.g. "Authorization" (they enter "Bearer …") '
            'or "X-Api-Key".'
        ),
    )
    groups = models.ManyToManyField(
        Group,
        blank=True,
        related_name="mcp_servers",
        help_text=_("Whose runs get its tools. None selected: everyone (docs/teams.md, Groups)."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PinnedSecretsQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("MCP server")

    def __str__(self) -> str:
        return self.name

    def points_at(self) -> Any:
        """Where its headers (and the secrets of its URL) are sent: the URL's origin, whatever the transport (a
        stdio server sends them nowhere, and keeps them for the URL it had)."""
        return origin(self.url)

    @property
    def secrets_are_unreadable(self) -> bool:
        return isinstance(self.env, UnreadableSecret) or isinstance(self.headers, UnreadableSecret)

    def group_names(self) -> frozenset[str]:
        """The names of the groups it allows (none: everyone); prefetch `groups` when reading many."""
        return frozenset(group.name for group in self.groups.all())

    def to_config(self) -> McpServerConfig:
        """The configuration the connection layer uses. Raises McpConfigError for a row that cannot be used."""
        if self.secrets_are_unreadable:
            raise McpConfigError(
                f"MCP server {self.name!r}: its stored environment or headers cannot be decrypted with "
                "AGENTWEB_SECRET_KEYS."
            )
        return McpServerConfig(
            name=self.name,
            transport=self.transport,
            command=self.command if self.transport == self.Transport.STDIO else "",
            args=tuple(self.args or ()) if self.transport == self.Transport.STDIO else (),
            env=dict(self.env or {}) if self.transport == self.Transport.STDIO else {},
            url=self.url if self.transport == self.Transport.HTTP else "",
            headers=dict(self.headers or {}) if self.transport == self.Transport.HTTP else {},
            timeout=float(self.timeout),
            enabled=self.enabled,
            offered_tools=frozenset(self.offered_tools) if self.offered_tools else None,
            require_approval=self.require_approval,
            approval_exempt=frozenset(self.approval_exempt or ()),
            source="admin",
            per_person=self.per_person or "",
            person_header=self.person_header if self.per_person == self.PerPerson.HEADER else "",
            groups=self.group_names() if self.pk is not None else frozenset(),
        )

    def clean(self) -> None:
        super().clean()
        errors: dict[str, str] = {}
        for field in ("args", "offered_tools", "approval_exempt"):
            value = getattr(self, field)
            if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                errors[field] = "A JSON list of strings."
        if not errors and not self.secrets_are_unreadable:
            try:
                self.to_config()
            except McpConfigError as exc:
                errors[_field_of(str(exc))] = str(exc)
        if errors:
            raise ValidationError(errors)


def _field_of(message: str) -> Any:
    if "each person connects" in message:
        return "per_person"
    if "personHeader" in message:
        return "person_header"
    for field in ("command", "url", "timeout", "env", "headers", "name"):
        if f"'{field}'" in message or f"the {field}" in message:
            return field
    return "name" if "name" in message else None
