"""MCP tools as ordinary ``tools.base.Tool`` objects, so the executor (argument validation, deadline, caps),
approvals and the Tools panel treat them like any other tool.

Each Tool's function is async, takes the call's ToolContext (injected, never shown to the model) and returns
``(text for the model, artifact)``; an ``isError`` result becomes an error result with the server's text.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from jsonschema.exceptions import SchemaError

from tools.base import Tool
from tools.context import ToolContext
from tools.executor import ToolFailure
from tools.injection import InjectedContext, Injection
from tools.mcp.config import McpServerConfig
from tools.mcp.connection import ServerState
from tools.mcp.manager import McpManager
from tools.mcp.names import server_prefix, tool_name

__all__ = ["CONTEXT_PARAMETER", "McpTools", "build_tool", "configured_tools", "server_tools"]

log = logging.getLogger("agentweb.tools.mcp")

# The injected parameter's name: an MCP tool whose schema had an argument of this name would lose it, so it is one
# no server would choose.
CONTEXT_PARAMETER = "_agentweb_mcp_context"


@dataclass(frozen=True)
class McpTools:
    tools: list[Tool] = field(default_factory=list)
    # How the names of disabled servers' tools start: a call of one gets "disabled", not "unknown tool".
    disabled_prefixes: tuple[str, ...] = ()
    # (prefix, server) of enabled servers whose tools are not known yet (never connected in this process): a call
    # of one gets why the server cannot be reached, not "unknown tool".
    unconnected: tuple[tuple[str, str], ...] = ()


def configured_tools(
    configs: Iterable[McpServerConfig],
    manager: McpManager,
    *,
    taken: frozenset[str] = frozenset(),
    groups: frozenset[str] | None = None,
) -> McpTools:
    """The tools of every enabled server of ``configs`` from the last list its connection saw; ``manager``'s
    connections are started (not waited for) on the way. ``taken``: names of other tools, which win. ``groups``: the
    person's group names: a server their groups do not allow is as if disabled for them (None: every server)."""
    configs = list(configs)
    manager.configure(configs)  # every server: the connections are the process's, not one person's
    states = manager.states()
    tools: list[Tool] = []
    disabled: list[str] = []
    unconnected: list[tuple[str, str]] = []
    for config in configs:
        if not config.enabled or (groups is not None and not config.may_use(groups)):
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


def server_tools(config: McpServerConfig, state: ServerState | None, manager: McpManager) -> list[Tool]:
    """The offered tools of ``config`` from the last list its connection saw (none before it first connected)."""
    if state is None:
        return []
    built = []
    for mcp_tool in state.tools:
        if not config.offers(mcp_tool.name):
            continue
        try:
            built.append(build_tool(config, mcp_tool, manager))
        except (ValueError, TypeError, SchemaError) as exc:
            log.warning("MCP tool %s of server %s is left out: %s", mcp_tool.name, config.name, exc)
    return built


def build_tool(config: McpServerConfig, mcp_tool: types.Tool, manager: McpManager) -> Tool:
    server, remote = config.name, mcp_tool.name

    async def call_mcp_tool(**kwargs: Any) -> tuple[str, Any]:
        context: ToolContext = kwargs.pop(CONTEXT_PARAMETER)
        converted = await manager.call(server, remote, kwargs, context)
        if converted.is_error:
            raise ToolFailure(converted.text)
        return converted.text, converted.artifact

    schema = dict(mcp_tool.input_schema or {})
    schema.setdefault("type", "object")
    description = (mcp_tool.description or mcp_tool.title or "").strip() or f"The tool {remote} of MCP server {server}."
    return Tool(
        name=tool_name(server, remote),
        description=description,
        parameters=schema,
        func=call_mcp_tool,
        is_async=True,
        requires_approval=config.requires_approval(remote),
        timeout=config.timeout,
        response_format="content_and_artifact",
        injections=(Injection(CONTEXT_PARAMETER, InjectedContext, has_default=False),),
    )
