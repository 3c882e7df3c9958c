"""The admin's page of what one person may use and why (docs/teams.md, "Groups"): every model configuration, agent,
tool and MCP server, allowed or not, with the group that allows it; and their daily token budget with the rule that
gave it. Read-only; linked from the person's change page (templates/admin/auth/user/change_form.html). Every answer
comes from the same rule the runs and pages follow (tools/groups.py), read from the rows as they are now."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from agents.models import Agent
from modelconfig.models import ModelConfiguration
from tools.groups import EVERYONE, allowed_by
from tools.models import HttpTool, ToolSetting
from tools.services import code_tools, mcp_server_configs

from .usage import budget_and_reason


@dataclass(frozen=True)
class Line:
    """One thing and whether the person may use it: `why` names the group (or "everyone", "their own agent") that
    allows it, or what keeps it from them."""

    name: str
    allowed: bool
    why: str
    note: str = ""  # disabled, not the default, …: what else the person meets of it


def reason(allowed: frozenset[str], groups: frozenset[str]) -> tuple[bool, str]:
    """(may use, why) by the one rule (tools/groups.py allowed_by)."""
    by = allowed_by(allowed, groups)
    if by == [EVERYONE]:
        return True, "everyone (no group named)"
    if by:
        return True, "group " + ", ".join(by)
    return False, "only for " + ", ".join(sorted(allowed))


def model_lines(groups: frozenset[str]) -> list[Line]:
    lines = []
    for row in ModelConfiguration.objects.prefetch_related("groups"):
        allowed, why = reason(row.group_names(), groups)
        note = ", ".join(word for word, on in (("disabled", not row.enabled), ("default", row.is_default)) if on)
        lines.append(Line(row.name, allowed, why, note))
    return lines


def agent_lines(user, groups: frozenset[str]) -> list[Line]:
    lines = []
    rows = Agent.objects.filter(Q(owner__isnull=True) | Q(owner=user)).prefetch_related("groups")
    for agent in rows.order_by("owner_id", "name"):
        if agent.owner_id is not None:
            lines.append(Line(agent.name, True, "their own agent", agent.slug))
            continue
        allowed, why = reason(agent.group_names(), groups)
        lines.append(Line(agent.name, allowed, why, agent.slug + (", default" if agent.is_default else "")))
    return lines


def tool_lines(groups: frozenset[str]) -> list[Line]:
    lines = []
    settings = {row.name: row for row in ToolSetting.objects.prefetch_related("groups")}
    for tool in code_tools().all():
        row = settings.get(tool.name)
        if row is None:
            lines.append(Line(tool.name, True, "everyone (no group named)"))
            continue
        allowed, why = reason(frozenset(group.name for group in row.groups.all()), groups)
        lines.append(Line(tool.name, allowed, why, "" if row.enabled else "disabled"))
    for row in HttpTool.objects.prefetch_related("groups"):
        allowed, why = reason(frozenset(group.name for group in row.groups.all()), groups)
        lines.append(Line(row.name, allowed, why, "HTTP tool" + ("" if row.enabled else ", disabled")))
    return lines


def mcp_lines(groups: frozenset[str]) -> list[Line]:
    lines = []
    for config in mcp_server_configs():
        allowed, why = reason(config.groups, groups)
        note = ("AGENTWEB_MCP_CONFIG" if config.source == "file" else "") + ("" if config.enabled else " disabled")
        lines.append(Line(config.name, allowed, why, note.strip()))
    return lines


def report(user) -> dict:
    """Everything the page shows of `user`."""
    groups = frozenset(user.groups.values_list("name", flat=True))
    budget, rule = budget_and_reason(user.pk, groups=groups)
    return {
        "groups": sorted(groups),
        "sections": [
            ("Model configurations", model_lines(groups)),
            ("Agents", agent_lines(user, groups)),
            ("Tools", tool_lines(groups)),
            ("MCP servers", mcp_lines(groups)),
        ],
        "budget": budget,
        "budget_rule": {"own": "their own budget", "default": "AGENTWEB_DAILY_TOKEN_BUDGET"}.get(rule, rule),
    }


def may_use_view(request: HttpRequest, user_id: int) -> HttpResponse:
    """The page, for staff who may view people (auth.view_user); wrapped in admin.site.admin_view (agentweb/urls.py)."""
    if not request.user.has_perm("auth.view_user"):
        raise PermissionDenied
    users = get_user_model()
    person = users.objects.filter(pk=user_id).first()
    if person is None:
        raise Http404("No such person.")
    context = {
        **admin.site.each_context(request),
        "title": f"What {person.get_username()} may use",
        "subtitle": None,
        "opts": users._meta,
        "original": person,
        **report(person),
    }
    return TemplateResponse(request, "admin/auth/user/may_use.html", context)
