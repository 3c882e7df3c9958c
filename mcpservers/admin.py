"""MCP servers in the admin: the rows (secret environment and headers write-only, as HTTP tools' headers; the URL's
password and secret query values shown as •••• everywhere, write-only in a superuser's form), each server's state in
this process, its tools with a try-it page each, the servers of AGENTWEB_MCP_CONFIG (read-only:
edit the file), and a warning when the tools would take too much of the model's context."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from agentweb.admin_display import PlainHelpTexts, cut_text
from providers.secrets import masked_url, origin, restore_hidden
from tools.admin import (
    MOVE_HELP,
    UNREADABLE,
    PrettyJSONField,
    SecretHeadersField,
    TryItMixin,
    left_behind,
    merge_headers,
    moves,
)
from tools.base import Tool
from tools.mcp.config import McpServerConfig
from tools.mcp.connection import ServerState
from tools.mcp.names import tool_name
from tools.services import mcp_connections, mcp_tools

from . import services
from .models import McpServer

URL_HELP = (
    "streamable HTTP: the server's endpoint. Its password and the values of its secret query parameters (token, key, "
    "secret, auth, sig, …) show as ••••: leave one to keep the stored value, type another to replace it."
)
SECRET_HELP = (
    "Values are secret: stored encrypted, never shown again. Leave a value blank to keep it; tick remove to delete "
    "one. If the form reports an error, type new values again."
)


class McpServerForm(forms.ModelForm):
    secret_env = SecretHeadersField(
        label="Environment",
        required=False,
        help_text="stdio: the server's environment; it gets nothing else but PATH (set HOME if it needs one). "
        + SECRET_HELP,
    )
    secret_headers = SecretHeadersField(label="Headers", required=False, help_text="HTTP: " + SECRET_HELP)

    class Meta:
        model = McpServer
        exclude = ["env", "headers"]
        field_classes = {"args": PrettyJSONField, "offered_tools": PrettyJSONField, "approval_exempt": PrettyJSONField}
        widgets = {
            "command": forms.TextInput(attrs={"size": 60}),
            "url": forms.TextInput(attrs={"size": 80}),
            "args": forms.Textarea(attrs={"rows": 3, "cols": 60, "class": "monospace"}),
            "offered_tools": forms.Textarea(attrs={"rows": 3, "cols": 60, "class": "monospace"}),
            "approval_exempt": forms.Textarea(attrs={"rows": 3, "cols": 60, "class": "monospace"}),
        }

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.cleared_by_move: list[str] = []  # secrets this form did not carry to a new address (for the message)
        if "url" in self.fields and self.instance.url:
            self.initial["url"] = masked_url(self.instance.url)  # write-only, as the headers
            moving = MOVE_HELP.format(what="URL", secrets="headers and URL secrets")
            self.fields["url"].help_text = f"{URL_HELP} {moving}"
        for field in ("env", "headers"):
            form_field = self.fields[f"secret_{field}"]
            form_field.initial = self._stored(field)
            if self.instance.secrets_are_unreadable:
                form_field.help_text = f"Stored values are {UNREADABLE}: type every value again to replace them."

    def _stored(self, field: str) -> dict[str, str]:
        value = getattr(self.instance, field)
        return dict(value) if isinstance(value, dict) else {}

    def clean_secret_env(self) -> dict[str, str]:
        self.instance.env = merge_headers(self.cleaned_data.get("secret_env") or [], self._stored("env"))
        return self.instance.env

    def clean_url(self) -> str:
        typed = self.cleaned_data.get("url") or ""
        moved = self.instance.pk is not None and origin(typed) != origin(self.instance.url)
        url, dropped = restore_hidden(typed, self.instance.url, carry=not moved)  # •••• back to the stored values
        if moved:
            self.cleared_by_move += [f"URL {name}" for name in dropped]
        elif dropped:
            raise forms.ValidationError(
                f"Type the value of {', '.join(dropped)}: •••• keeps a stored value, and none is stored for it."
            )
        return url

    def clean_secret_headers(self) -> dict[str, str]:
        rows, stored = self.cleaned_data.get("secret_headers") or [], self._stored("headers")
        moved = moves(self, "url")  # the URL is cleaned before this field
        self.instance.headers = merge_headers(rows, stored, carry=not moved)
        if moved:  # the stored values stay with the server they were typed for
            self.cleared_by_move += [f"header {name}" for name in left_behind(rows, stored)]
        return self.instance.headers


def describe_state(state: ServerState | None, *, enabled: bool = True) -> str:
    """One line for a server's state in this process."""
    if not enabled:
        return "disabled"
    if state is None:
        return "not connected in this process yet"
    if state.status == "connected":
        server = " ".join(part for part in (state.server_name, state.server_version) if part) or "no name given"
        tools = "1 tool" if len(state.tools) == 1 else f"{len(state.tools)} tools"
        return f"connected: {tools} ({server})"
    if state.status == "personal":
        tools = "1 tool" if len(state.tools) == 1 else f"{len(state.tools)} tools"
        return f"each person connects: {tools} known"
    if state.status == "failed":
        wait = max(0, round((state.retry_at or time.time()) - time.time()))
        return f"failed: {state.error} — retries in {wait} s"
    return state.status + "…"


def file_server_rows(configs: list[McpServerConfig]) -> list[dict[str, str]]:
    """The servers of AGENTWEB_MCP_CONFIG as the list's read-only rows (below the admin's own), columns as theirs."""
    states = mcp_connections().states()
    return [
        {
            "name": config.name,
            "transport": McpServer.Transport(config.transport).label,
            "target": file_server_target(config),
            "enabled": "yes" if config.enabled else "no",
            "require_approval": "yes" if config.require_approval else "no",
            "state": describe_state(states.get(config.name), enabled=config.enabled),
        }
        for config in configs
    ]


def file_server_target(config: McpServerConfig) -> str:
    """A file server's command and arguments, or its URL without what may be a secret in it: user and password,
    query string (a `?token=`) and fragment."""
    if config.transport != "http":
        return " ".join([config.command, *config.args])
    parts = urlsplit(config.url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        netloc = f"{host}:{parts.port}" if parts.port else host
    except ValueError:  # a port that is not a number: the connection fails and says so; the host is enough here
        netloc = host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@admin.register(McpServer)
class McpServerAdmin(PlainHelpTexts, TryItMixin, admin.ModelAdmin):
    form = McpServerForm
    change_form_template = None  # the try-it pages are per tool (its tools' list), not per server
    list_display = ["name", "transport", "target", "enabled", "require_approval", "state"]
    list_editable = ["enabled"]
    list_filter = ["enabled", "transport", "require_approval", "groups"]
    filter_horizontal = ["groups"]
    search_fields = ["name", "command"]  # not the URL: a search would tell its secrets one character at a time
    readonly_fields = ["state", "tool_list", "shown_url"]
    fieldsets = [
        (None, {"fields": ["name", "transport", "enabled", "timeout", "state"]}),
        ("stdio", {"fields": ["command", "args", "secret_env"]}),
        ("Streamable HTTP", {"fields": ["url", "secret_headers", "per_person", "person_header"]}),
        ("Tools", {"fields": ["offered_tools", "tool_list"]}),
        ("Approval", {"fields": ["require_approval", "approval_exempt"]}),
        ("Who may use it", {"fields": ["groups"]}),
    ]

    # A stdio server is a command run as the app's user: only superusers add or change servers (or try their tools),
    # whatever model permissions a staff account was given.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: McpServer | None = None) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: McpServer | None = None) -> bool:
        return request.user.is_superuser

    def get_fieldsets(self, request: HttpRequest, obj: McpServer | None = None) -> list:
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None or self.has_change_permission(request, obj):
            return fieldsets
        # The read-only page prints each field's value: the URL masked, the secrets not at all.
        shown = {"url": "shown_url", "secret_env": None, "secret_headers": None}
        return [
            (title, {**options, "fields": [shown.get(f, f) for f in options["fields"] if shown.get(f, f)]})
            for title, options in fieldsets
        ]

    def save_model(self, request: HttpRequest, obj: McpServer, form: McpServerForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if message := obj.cleared_secrets_message(form.cleared_by_move):
            messages.warning(request, message)

    def get_urls(self):
        opts = self.model._meta
        name = f"{opts.app_label}_{opts.model_name}_try_tool"
        # A tool's name may hold a slash ("files/read"): it is the rest of the path. The server's id never does (the
        # admin quotes a slash in a key), so the first "/try/" ends it.
        return [
            path("<str:object_id>/try/<path:tool>/", self.admin_site.admin_view(self.try_view), name=name),
            *super().get_urls(),
        ]

    def trial_tool(self, obj: McpServer, tool: str | None = None, **kwargs: Any) -> Tool:
        if tool is None:
            raise ValueError("Pick one of the server's tools on its page (Tools) to try it.")
        if not obj.enabled:
            raise ValueError(f"MCP server {obj.name!r} is disabled: enable it to try its tools.")
        found = {t.name: t for t in mcp_tools().tools}.get(tool_name(obj.name, tool))
        if found is None:
            state = mcp_connections().state(obj.name)
            raise ValueError(f"MCP server {obj.name!r} has no tool {tool!r} now ({describe_state(state)}).")
        return found

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        report = services.context_report()  # also starts the connections this process does not have yet
        if report.too_large:
            messages.warning(
                request,
                f"The MCP servers' tools take about {report.tokens} tokens of the model's context, more than "
                f"{report.share:.0%} of the smallest context window ({report.window} tokens): offer fewer of each "
                "server's tools (Offered tools) or disable a server.",
            )
        extra_context = {**(extra_context or {}), "file_servers": file_server_rows(services.file_configs())}
        return super().changelist_view(request, extra_context)

    @admin.display(description="command or URL")
    def target(self, obj: McpServer) -> str:
        if obj.transport == McpServer.Transport.HTTP:
            return cut_text(masked_url(obj.url))
        return cut_text(" ".join([obj.command, *(obj.args or [])]))

    @admin.display(description="URL")
    def shown_url(self, obj: McpServer) -> str:
        return masked_url(obj.url) or "—"

    @admin.display(description="state (this process)")
    def state(self, obj: McpServer) -> str:
        if obj.pk is None:
            return "—"
        return cut_text(describe_state(mcp_connections().state(obj.name), enabled=obj.enabled))

    @admin.display(description="its tools")
    def tool_list(self, obj: McpServer) -> str:
        state = mcp_connections().state(obj.name) if obj.pk else None
        if state is None or not state.tools:
            return "— (the list comes from the server once it is connected)"
        opts = self.model._meta
        rows = (
            (
                tool.name,
                "" if obj.offered_tools is None or tool.name in obj.offered_tools else " (not offered)",
                tool.description or "",
                reverse(f"admin:{opts.app_label}_{opts.model_name}_try_tool", args=[obj.pk, tool.name]),
            )
            for tool in state.tools
        )
        return format_html(
            "<table><tr><th>tool</th><th>description</th><th></th></tr>{}</table>",
            format_html_join(
                "", '<tr><td><code>{}</code>{}</td><td>{}</td><td><a href="{}">Try it</a></td></tr>', rows
            ),
        )
