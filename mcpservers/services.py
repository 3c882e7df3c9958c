"""Synchronous operations of the MCP servers app (async code calls them through ``database_sync_to_async``):
which servers this process connects to, their tools as a run's tool set gets them, the context report, and
``mcp import``.

The servers are the admin's rows and the servers of AGENTWEB_MCP_CONFIG (read once, at start); a server of the
file wins over a row of the same name. The connections are this process's (tools/mcp/manager.py): reading the
tools never waits for one.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from tools.base import Tool
from tools.mcp.config import McpConfigError, McpServerConfig, load_config_file
from tools.mcp.manager import default_manager
from tools.mcp.names import server_prefix
from tools.mcp.tools import server_tools

from .models import McpServer

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "ContextReport",
    "ImportReport",
    "McpTools",
    "context_report",
    "file_configs",
    "import_file",
    "mcp_tools",
    "server_configs",
]

log = logging.getLogger("agentweb.tools.mcp")

# The window the context share is taken of when no model configuration says (a model configuration's default).
DEFAULT_CONTEXT_WINDOW = 8192
_file: dict = {"path": None, "configs": []}


def file_configs() -> list[McpServerConfig]:
    """The servers of AGENTWEB_MCP_CONFIG, read once per process. Raises McpConfigError."""
    path = getattr(settings, "AGENTWEB_MCP_CONFIG", "")
    if _file["path"] != path:
        _file["configs"] = load_config_file(path) if path else []
        _file["path"] = path
    return list(_file["configs"])


def server_configs() -> list[McpServerConfig]:
    """Every configured server, enabled or not: the file's, then the admin's rows (the file wins a name)."""
    configs = file_configs()
    taken = {config.name for config in configs}
    for row in McpServer.objects.all():
        if row.name in taken:
            log.warning("MCP server %s of the admin is hidden by the one of AGENTWEB_MCP_CONFIG", row.name)
            continue
        try:
            configs.append(row.to_config())
        except McpConfigError as exc:  # a row saved around the form's checks, or unreadable secrets
            log.warning("%s", exc)
    return configs


@dataclass(frozen=True)
class McpTools:
    tools: list[Tool] = field(default_factory=list)
    # How the names of disabled servers' tools start: a call of one gets "disabled", not "unknown tool".
    disabled_prefixes: tuple[str, ...] = ()
    # (prefix, server) of enabled servers whose tools are not known yet (never connected in this process): a call
    # of one gets why the server cannot be reached, not "unknown tool".
    unconnected: tuple[tuple[str, str], ...] = ()


def mcp_tools(*, taken: frozenset[str] = frozenset()) -> McpTools:
    """The tools of every enabled server from the last list its connection saw; connections are started (not
    waited for) on the way. ``taken``: names of other tools, which win."""
    configs = server_configs()
    manager = default_manager()
    manager.configure(configs)
    states = manager.states()
    tools: list[Tool] = []
    disabled: list[str] = []
    unconnected: list[tuple[str, str]] = []
    for config in configs:
        if not config.enabled:
            disabled.append(server_prefix(config.name))
            continue
        state = states.get(config.name)
        if state is None or (not state.tools and state.status != "connected"):
            unconnected.append((server_prefix(config.name), config.name))
        for tool in server_tools(config, states.get(config.name), manager):
            if tool.name in taken:
                log.warning("MCP tool %s is hidden by another tool of the same name", tool.name)
                continue
            tools.append(tool)
    return McpTools(tools=tools, disabled_prefixes=tuple(disabled), unconnected=tuple(unconnected))


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
    from modelconfig.models import ModelConfiguration

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
    transport, command, arguments, environment, URL, headers, timeout, enabled and approval). Raises
    McpConfigError, and then nothing is written."""
    configs = load_config_file(path)
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
            _, was_created = McpServer.objects.update_or_create(name=config.name, defaults=values)
            (created if was_created else updated).append(config.name)
    return ImportReport(created=created, updated=updated)
