"""Synchronous operations of the MCP servers app (async code calls them through ``database_sync_to_async``):
which servers this process connects to (the tools app asks ``server_configs`` for them: mcpservers/apps.py), the
context report, and ``mcp import``.

The servers are the admin's rows and the servers of AGENTWEB_MCP_CONFIG (read once, at start); a server of the
file wins over a row of the same name. The connections are this process's (tools.services.mcp_connections): reading
the tools (tools.services.mcp_tools) never waits for one.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction

from modelconfig.models import ModelConfiguration
from tools.base import Tool
from tools.mcp.config import McpConfigError, McpServerConfig, load_config_file
from tools.services import mcp_tools

from .models import McpServer

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "ConfigFile",
    "ContextReport",
    "ImportReport",
    "context_report",
    "file_configs",
    "import_file",
    "server_configs",
]

log = logging.getLogger("agentweb.tools.mcp")

# The window the context share is taken of when no model configuration says (a model configuration's default).
DEFAULT_CONTEXT_WINDOW = 8192


class ConfigFile:
    """The servers of AGENTWEB_MCP_CONFIG, read once per process (the app's: mcpservers/apps.py), and again when the
    setting names another file (a test's)."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.configs: list[McpServerConfig] = []

    def servers(self) -> list[McpServerConfig]:
        """Raises McpConfigError."""
        path = getattr(settings, "AGENTWEB_MCP_CONFIG", "")
        if self.path != path:
            self.configs = load_config_file(path) if path else []
            self.path = path
        return list(self.configs)


def file_configs() -> list[McpServerConfig]:
    """The servers of AGENTWEB_MCP_CONFIG, read at start. Raises McpConfigError."""
    return apps.get_app_config("mcpservers").config_file.servers()


def server_configs() -> list[McpServerConfig]:
    """Every configured server, enabled or not: the file's, then the admin's rows (the file wins a name)."""
    configs = file_configs()
    taken = {config.name for config in configs}
    for row in McpServer.objects.prefetch_related("groups"):
        if row.name in taken:
            log.warning("MCP server %s of the admin is hidden by the one of AGENTWEB_MCP_CONFIG", row.name)
            continue
        try:
            configs.append(row.to_config())
        except McpConfigError as exc:  # a row saved around the form's checks, or unreadable secrets
            log.warning("%s", exc)
    return configs


# --- how much of the model's context the tools take -----------------------------------------------


@dataclass(frozen=True)
class ContextReport:
    tokens: int  # estimated: the JSON of the offered tools' definitions, 4 characters a token
    window: int  # the smallest context window of the model configurations
    share: float

    @property
    def limit(self) -> int:
        return int(self.window * self.share)

    @property
    def too_large(self) -> bool:
        return self.tokens > self.limit


def definitions_tokens(tools: list[Tool]) -> int:
    text = json.dumps(
        [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools], ensure_ascii=False
    )
    return len(text) // 4


def context_report() -> ContextReport:
    windows = [w for w in ModelConfiguration.objects.values_list("context_window", flat=True) if w]
    share = float(getattr(settings, "AGENTWEB_MCP_CONTEXT_SHARE", 0.25))
    return ContextReport(
        tokens=definitions_tokens(mcp_tools().tools), window=min(windows, default=DEFAULT_CONTEXT_WINDOW), share=share
    )


# --- manage.py mcp import ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportReport:
    created: list[str]
    updated: list[str]


def import_file(path: str) -> ImportReport:
    """Copy the servers of an mcpServers file into the admin: new names are created, known ones updated (their
    transport, command, arguments, environment, URL, headers, timeout, enabled, approval and groups: a name that is
    no group is a mistake). Raises McpConfigError, and then nothing is written."""
    configs = load_config_file(path)
    named = {name for config in configs for name in config.groups}
    groups = {group.name: group for group in Group.objects.filter(name__in=named)}
    unknown = [
        f"MCP server {config.name!r}: no group is named {name!r}."
        for config in configs
        for name in sorted(config.groups)
        if name not in groups
    ]
    if unknown:
        raise McpConfigError(*unknown)
    created, updated = [], []
    with transaction.atomic():
        for config in configs:
            values = {
                "transport": config.transport,
                "command": config.command,
                "args": list(config.args),
                "env": dict(config.env),
                "url": config.url,
                "headers": dict(config.headers),
                "timeout": config.timeout,
                "enabled": config.enabled,
                "offered_tools": sorted(config.offered_tools) if config.offered_tools is not None else None,
                "require_approval": config.require_approval,
                "approval_exempt": sorted(config.approval_exempt),
            }
            row, was_created = McpServer.objects.update_or_create(name=config.name, defaults=values)
            row.groups.set([groups[name] for name in config.groups])  # who may use it: the file says (docs/teams.md)
            (created if was_created else updated).append(config.name)
    return ImportReport(created=created, updated=updated)
