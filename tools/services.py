"""Synchronous database operations of the tool registry. Keyword-only, typed; async code calls them through
``database_sync_to_async``, never directly.

The code defines tools; the database says which of them a user gets and how (enabled, groups, approval,
timeout, description), and adds the HTTP tools defined in the admin.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction
from jsonschema.exceptions import SchemaError

from tools.approval_rules import ArgumentRule
from tools.approval_rules import decide as decide_by_rules
from tools.base import Tool
from tools.context import ToolContext, ToolUser
from tools.executor import ToolResult, execute_tool
from tools.groups import may_use
from tools.http_tool import build_http_tool
from tools.mcp.config import McpServerConfig
from tools.mcp.connection import unavailable_message
from tools.mcp.manager import McpManager
from tools.mcp.tools import McpTools, configured_tools
from tools.models import (
    AllowedHost,
    ApprovalRule,
    HttpTool,
    SettingsStamp,
    ToolSetting,
    normalise_host,
)
from tools.registry import ToolRegistry, default_registry
from tools.settings_cache import SETTINGS_CACHE
from tools.store import DatabaseStore

__all__ = [
    "DEFAULT_APPROVAL",
    "SyncReport",
    "ToolSet",
    "allowed_hosts",
    "allowed_hosts_provider",
    "code_tools",
    "example_arguments",
    "mcp_connections",
    "mcp_server_configs",
    "mcp_tools",
    "run_tool_trial",
    "sync_tool_settings",
    "tool_for_http_tool",
    "tool_for_setting",
    "toolset_for_stamp",
    "toolset_for_user",
]

log = logging.getLogger("agentweb.tools")

DEFAULT_APPROVAL = {"approve": True, "edit": True, "reject": True, "respond": True}


def code_tools() -> ToolRegistry:
    """Every tool the code defines (built-in and AGENTWEB_TOOL_MODULES). Shared: never mutate it."""
    return default_registry(tuple(settings.AGENTWEB_TOOL_MODULES))


# --- keeping the rows in step with the code ----------------------------------------------


@dataclass(frozen=True)
class SyncReport:
    created: list[str]
    missing: list[str]  # rows whose tool the code no longer defines (kept, marked missing)
    returned: list[str]  # rows marked missing before whose tool is back


def sync_tool_settings(*, using: str = "default", registry: ToolRegistry | None = None) -> SyncReport:
    """A ToolSetting row for every code tool. New rows take the tool's own defaults; existing rows keep the
    admin's choices; rows of tools that vanished are kept and marked missing, never deleted."""
    tools = {item.name: item for item in (registry or code_tools()).all()}
    rows = ToolSetting.objects.using(using)
    with transaction.atomic(using=using):
        existing = {name: missing for name, missing in rows.values_list("name", "missing")}
        created = sorted(set(tools) - set(existing))
        rows.bulk_create(
            [ToolSetting(name=name, requires_approval=tools[name].requires_approval) for name in created],
            ignore_conflicts=True,  # another process syncing at the same moment
        )
        missing = sorted(name for name, was_missing in existing.items() if name not in tools and not was_missing)
        returned = sorted(name for name, was_missing in existing.items() if name in tools and was_missing)
        rows.filter(name__in=missing).update(missing=True)
        rows.filter(name__in=returned).update(missing=False)
    if created or missing or returned:  # the stamp changed with them (tools/settings_cache.py)
        log.info("Tool settings synced: %d new, %d missing, %d back", len(created), len(missing), len(returned))
    return SyncReport(created=created, missing=missing, returned=returned)


# --- what a user gets --------------------------------------------------------------------


class DisabledTools(frozenset):
    """The names of tools that exist but are switched off, and the prefixes of whole sources switched off (a
    disabled MCP server: its tools' names are not known while it is not connected).

    ``unconnected``: (prefix, server) of enabled MCP servers whose tools are not known yet in this process (never
    connected): ``unavailable`` says why a call of one cannot run rather than "unknown tool"."""

    prefixes: tuple[str, ...] = ()
    unconnected: tuple[tuple[str, str], ...] = ()

    def __new__(cls, names=(), prefixes: tuple[str, ...] = (), unconnected: tuple[tuple[str, str], ...] = ()):
        made = super().__new__(cls, names)
        made.prefixes = tuple(prefixes)
        made.unconnected = tuple(unconnected)
        return made

    def __contains__(self, name: object) -> bool:
        return frozenset.__contains__(self, name) or (isinstance(name, str) and name.startswith(self.prefixes))

    def unavailable(self, name: str) -> str | None:
        """The error result for a call of a tool of an MCP server that has not connected yet, else None."""
        for prefix, server in self.unconnected:
            if name.startswith(prefix):
                return unavailable_message(server, mcp_connections().state(server))
        return None


@dataclass(frozen=True)
class ToolSet:
    """The tools of one user for one run.

    ``registry``: the tools the model may call, with the admin's overrides applied.
    ``disabled``: tools that exist but are switched off or not allowed for this user: a call gets
    "Tool 'x' is disabled", not "unknown tool".
    ``approval``: for each tool of ``registry`` that requires approval, which choices the person has.
    """

    registry: ToolRegistry
    disabled: frozenset[str]
    approval: dict[str, dict[str, bool]]
    allowed_hosts: frozenset[str]
    user_id: int | None
    username: str
    groups: frozenset[str]
    # The admin's approval rules by argument values, per tool, in order; and the choices each tool offers.
    rules: dict[str, tuple[ArgumentRule, ...]] = dataclasses.field(default_factory=dict)
    choices: dict[str, dict[str, bool]] = dataclasses.field(default_factory=dict)

    def requirement(self, name: str, args: dict[str, Any]) -> dict[str, bool] | None:
        """The choices to offer before this call runs, or None when it runs at once: the first of the tool's
        rules that matches the arguments decides, else the tool's own "requires approval"."""
        action = decide_by_rules(self.rules.get(name, ()), args)
        if action == "allow":
            return None
        if action == "ask":
            return self.choices.get(name, dict(DEFAULT_APPROVAL))
        return self.approval.get(name)

    def without(self, names) -> ToolSet:
        """This tool set less the tools `names` (those a person turned off for one chat): not offered, and no
        approval asked for them. The same set when none of them is in it."""
        off = frozenset(names) & frozenset(self.registry.names())
        if not off:
            return self
        tools = [tool for tool in self.registry.all() if tool.name not in off]
        approval = {name: choices for name, choices in self.approval.items() if name not in off}
        return dataclasses.replace(self, registry=ToolRegistry(tools), approval=approval)

    def disabled_message(self, name: str) -> str | None:
        """The error result for a call of a tool that exists but this user may not use now, else None."""
        return f"Tool {name!r} is disabled." if name in self.disabled else None

    def tool_user(self) -> ToolUser:
        return ToolUser(id=self.user_id, username=self.username, groups=self.groups)


def toolset_for_user(*, user, registry: ToolRegistry | None = None, groups: frozenset[str] | None = None) -> ToolSet:
    """The enabled code tools and HTTP tools ``user``'s groups allow, with their effective settings.

    ``registry``: the code tools to start from (default: every code tool); it is not changed.
    ``groups``: ``user``'s group names, when the caller read them already.
    """
    user_id = user.pk if user is not None and user.is_authenticated else None
    if user_id is None:
        groups = frozenset()
    elif groups is None:
        groups = frozenset(user.groups.values_list("name", flat=True))
    tools: list[Tool] = []
    disabled: set[str] = set()
    approval: dict[str, dict[str, bool]] = {}

    settings = {row.name: row for row in ToolSetting.objects.prefetch_related("groups")}
    code = registry if registry is not None else code_tools()
    for code_tool in code.all():
        row = settings.get(code_tool.name)
        if row is not None and not (row.enabled and _group_allows(row, groups)):
            disabled.add(code_tool.name)
            continue
        # No row yet (a tool added since the last sync): the code's own settings.
        tools.append(code_tool if row is None else _apply_setting(code_tool, row))
        if tools[-1].requires_approval:
            approval[code_tool.name] = dict(DEFAULT_APPROVAL) if row is None else row.approval_config()

    hosts = frozenset(allowed_hosts())
    http_rows = list(HttpTool.objects.prefetch_related("groups"))
    for row in http_rows:
        if row.name in code:
            log.warning("HTTP tool %s is hidden by the code tool of the same name", row.name)
            continue
        if not (row.enabled and _group_allows(row, groups)):
            disabled.add(row.name)
            continue
        try:
            tools.append(build_http_tool(row, allowed_hosts=hosts))
        except (ValueError, TypeError, SchemaError) as exc:  # a row saved around the form's checks: leave it out
            log.warning("HTTP tool %s is invalid and left out: %s", row.name, type(exc).__name__)
            disabled.add(row.name)
            continue
        if row.requires_approval:
            approval[row.name] = row.approval_config()

    # MCP servers' tools: by default each asks before it runs (the server's require_approval, its exempt tools).
    mcp = mcp_tools(taken=frozenset(tool.name for tool in tools) | frozenset(disabled), groups=groups)
    for mcp_tool in mcp.tools:
        tools.append(mcp_tool)
        if mcp_tool.requires_approval:
            approval[mcp_tool.name] = dict(DEFAULT_APPROVAL)

    rules: dict[str, list[ArgumentRule]] = {}
    for rule in ApprovalRule.objects.filter(enabled=True):
        rules.setdefault(rule.tool_name, []).append(rule.to_rule())
    choices = {name: row.approval_config() for name, row in settings.items()}
    choices.update({row.name: row.approval_config() for row in http_rows})
    return ToolSet(
        registry=ToolRegistry(tools),
        disabled=DisabledTools(disabled, mcp.disabled_prefixes, mcp.unconnected),
        approval=approval,
        rules={name: tuple(found) for name, found in rules.items()},
        choices=choices,
        allowed_hosts=hosts,
        user_id=user_id,
        username=user.get_username() if user_id is not None else "",
        groups=groups,
    )


def toolset_for_stamp(*, user, groups: frozenset[str], stamp: str | None) -> ToolSet:
    """toolset_for_user for a run: built once per process for each set of groups while the settings' stamp
    (SettingsStamp, read by the caller as the run starts) stays the same. Every write to the rows the tools are
    built from gives a new stamp (tools/settings_cache.py), so the next run of every process sees it; a change of an
    MCP server's tool list in this process (its connection's: tools/mcp/manager.py) is a new key. None: no stamp (a
    database without the row): built afresh."""
    if stamp is None or user is None or not user.is_authenticated:
        return toolset_for_user(user=user, groups=groups)
    key = (groups, mcp_connections().generation)
    found = SETTINGS_CACHE.get(stamp, "toolsets", key, lambda: toolset_for_user(user=user, groups=groups))
    if found.user_id == user.pk:
        return found
    return dataclasses.replace(found, user_id=user.pk, username=user.get_username())


def settings_stamp() -> str | None:
    """The settings' stamp now (None before the first migration made it): one statement, under which this process
    keeps what it built from the settings (toolset_for_stamp, modelconfig.services.config_for)."""
    return SettingsStamp.objects.filter(pk=1).values_list("stamp", flat=True).first()


def toolset_for_page(user, *, stamp: str | None = None) -> ToolSet:
    """toolset_for_stamp with the settings' stamp (read now unless given) and `user`'s groups as of it (groups_of):
    what a page shows of the tools (the empty chat's starting prompts) without building them again for every page
    view (one statement, or none, instead of the seven of a build)."""
    if user is None or not user.is_authenticated:
        return toolset_for_user(user=user)
    stamp = stamp if stamp is not None else settings_stamp()
    return toolset_for_stamp(user=user, groups=groups_of(user, stamp=stamp), stamp=stamp)


def groups_of(user, *, stamp: str | None) -> frozenset[str]:
    """The names of `user`'s groups, kept in the settings cache under `stamp` (a change of anyone's groups gives a
    new one: tools/settings_cache.py). None: read now. Nobody signed in: no group."""
    if user is None or not user.is_authenticated:
        return frozenset()
    return groups_of_id(user.pk, stamp=stamp)


def groups_of_id(user_id: int, *, stamp: str | None) -> frozenset[str]:
    """groups_of for a person known by id (a run's owner, a budget's person)."""
    return SETTINGS_CACHE.get(
        stamp,
        "groups",
        user_id,
        lambda: frozenset(Group.objects.filter(user__id=user_id).values_list("name", flat=True)),
    )


def mcp_connections() -> McpManager:
    """This process's MCP connections, made with the app (tools/apps.py)."""
    return apps.get_app_config("tools").mcp_connections


def mcp_server_configs() -> list[McpServerConfig]:
    """Every configured MCP server, enabled or not, as the app that configures them says (mcpservers/apps.py gives
    its own: the admin's rows and AGENTWEB_MCP_CONFIG); none without such an app."""
    return apps.get_app_config("tools").mcp_servers()


def mcp_tools(*, taken: frozenset[str] = frozenset(), groups: frozenset[str] | None = None) -> McpTools:
    """The MCP servers' tools, from the last list each connection saw; the connections are started (not waited for)
    on the way. ``taken``: names of other tools, which win. ``groups``: the person's group names: the tools of a
    server their groups do not allow are left out (and called, "disabled"); None: every server's (the admin's
    checks)."""
    return configured_tools(mcp_server_configs(), mcp_connections(), taken=taken, groups=groups)


def _group_allows(row: ToolSetting | HttpTool, groups: frozenset[str]) -> bool:
    return may_use({group.name for group in row.groups.all()}, groups)  # prefetched; the rule: tools/groups.py


def _apply_setting(code_tool: Tool, row: ToolSetting) -> Tool:
    """A copy of the shared tool with the admin's overrides: the default registry is never changed."""
    changes: dict[str, Any] = {}
    if row.description_override.strip():
        changes["description"] = row.description_override.strip()
    if row.timeout:
        changes["timeout"] = float(row.timeout)
    if row.requires_approval != code_tool.requires_approval:
        changes["requires_approval"] = row.requires_approval
    return dataclasses.replace(code_tool, **changes) if changes else code_tool


def allowed_hosts() -> set[str]:
    """Hosts the SSRF guard lets through although they resolve to private or local addresses: the admin's
    list, plus AGENTWEB_FETCH_ALLOWED_HOSTS."""
    hosts = set(AllowedHost.objects.values_list("host", flat=True))
    hosts.update(normalise_host(host) for host in settings.AGENTWEB_FETCH_ALLOWED_HOSTS)
    return hosts


async def allowed_hosts_provider() -> set[str]:
    """``allowed_hosts`` for async callers: the ``ALLOWED_HOSTS_PROVIDER`` of tools.builtin.fetch_url."""
    return await sync_to_async(allowed_hosts)()


# --- the admin's "try it" page -----------------------------------------------------------


def tool_for_setting(*, setting: ToolSetting) -> Tool | None:
    """The code tool of ``setting`` as the chat would run it (enabled or not), None when the code lost it."""
    code_tool = code_tools().get(setting.name)
    return None if code_tool is None else _apply_setting(code_tool, setting)


def tool_for_http_tool(*, http_tool: HttpTool) -> Tool:
    """The HTTP tool as the chat would run it (enabled or not). Raises ValueError for an invalid row."""
    return build_http_tool(http_tool, allowed_hosts=allowed_hosts())


def run_tool_trial(*, tool: Tool, user, args: dict) -> ToolResult:
    """Run ``tool`` once with ``args`` for ``user`` through the executor (validation, deadline, caps),
    without approval: the person asking is the one who would approve. Sync: for admin views."""
    groups = frozenset(user.groups.values_list("name", flat=True))
    context = ToolContext(
        user=ToolUser(id=user.pk, username=user.get_username(), groups=groups), store=DatabaseStore(user.pk)
    )
    return async_to_sync(execute_tool)(ToolRegistry([tool]), tool.name, args, context=context)


def example_arguments(parameters: dict) -> dict[str, Any]:
    """Arguments that show the shape a tool expects: defaults, the first enum value, else an empty value."""
    properties = parameters.get("properties") or {}
    return {name: _example_value(schema) for name, schema in properties.items() if isinstance(schema, dict)}


def _example_value(schema: dict) -> Any:
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "examples" in schema and isinstance(schema["examples"], list) and schema["examples"]:
        return schema["examples"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and isinstance(schema.get("anyOf"), list) and schema["anyOf"]:
        return _example_value(schema["anyOf"][0])
    if kind == "object":
        return example_arguments(schema)
    return {"string": "", "integer": 0, "number": 0, "boolean": False, "array": []}.get(kind)
