"""The tool registry in the Django admin: code tools' settings, HTTP tools, allowed hosts, users' memories,
and a "try it" page per tool.

HTTP tool header values are write-only: the form shows each header's name and "•••• (set)", never its value,
and a value left blank keeps the stored one. Headers stored encrypted that AGENTWEB_SECRET_KEYS cannot decrypt
(names included: the mapping is one token) are reported as such: a save that types no header keeps them as they
are, typed headers replace them, and "remove the stored headers" drops them.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Case, Value, When
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from jsonschema.exceptions import SchemaError

from agentweb.admin_display import PlainHelpTexts, cut, cut_text, flag
from providers.secrets import origin, public_url
from tools import services
from tools.base import Tool
from tools.models import (
    AllowedHost,
    ApprovalRule,
    HttpTool,
    MemoryItem,
    ToolSetting,
    headers_problem,
    known_tool_names,
)
from tools.pool import TOOL_THREADS, StuckCalls

MASKED = "•••• (set)"
UNREADABLE = "stored, but they cannot be decrypted with AGENTWEB_SECRET_KEYS"
APPROVAL_FIELDS = ("requires_approval", "allow_approve", "allow_edit", "allow_reject", "allow_respond")


# --- write-only headers -------------------------------------------------------------------


class SecretHeadersWidget(forms.Widget):
    """Rows of (name, value, remove). Renders names only: a value is never written into the page."""

    template_name = "admin/tools/widgets/secret_headers.html"
    extra_rows = 2

    def get_context(self, name: str, value: Any, attrs: dict | None) -> dict:
        context = super().get_context(name, None, attrs)
        if isinstance(value, dict):  # the stored headers
            rows = [{"name": key, "original": key} for key in value]
        else:  # the rows of a submitted form shown again
            rows = [{"name": row["name"], "original": row["original"]} for row in value or [] if row["name"]]
        rows += [{"name": "", "original": ""}] * self.extra_rows
        context["widget"].update(rows=rows, masked=MASKED, count=len(rows))
        return context

    def render(self, name: str, value: Any, attrs: dict | None = None, renderer: Any = None) -> str:
        # The project's template engine (templates/admin/tools/), not the form renderer's own directories.
        context = self.get_context(name, value, attrs)
        return mark_safe(render_to_string(self.template_name, context))  # the template escapes every value

    def value_from_datadict(self, data, files, name: str) -> list[dict[str, Any]]:
        try:
            count = min(int(data.get(f"{name}-count", 0)), 100)
        except ValueError:
            count = 0
        return [
            {
                "name": data.get(f"{name}-{i}-name", "").strip(),
                "original": data.get(f"{name}-{i}-original", ""),
                "value": data.get(f"{name}-{i}-value", ""),
                "remove": bool(data.get(f"{name}-{i}-remove")),
            }
            for i in range(count)
        ]

    def value_omitted_from_data(self, data, files, name: str) -> bool:
        return f"{name}-count" not in data


class SecretHeadersField(forms.Field):
    widget = SecretHeadersWidget

    def has_changed(self, initial: Any, data: Any) -> bool:
        rows = [row for row in data or [] if row["name"] or row["value"]]
        names = [row["name"] for row in rows if not row["remove"]]
        return names != list(initial or {}) or any(row["value"] or row["remove"] for row in rows)


def merge_headers(rows: list[dict[str, Any]], stored: dict[str, str], *, carry: bool = True) -> dict[str, str]:
    """The headers after an edit: a blank value keeps the stored value of the row's original name. Not ``carry``
    (the row now points at another server: agentweb/pinned_secrets.py): a stored header left blank is dropped."""
    merged: dict[str, str] = {}
    for row in rows:
        name, value = row["name"], row["value"]
        if row["remove"] or (not name and not value):
            continue
        if not name:
            raise forms.ValidationError("A header value was given without a name.")
        if not value and not carry and row["original"] in stored:
            continue
        if not value:
            if row["original"] not in stored:
                raise forms.ValidationError(f"Give a value for the header {name}.")
            value = stored[row["original"]]
        if name.lower() in {key.lower() for key in merged}:
            raise forms.ValidationError(f"The header {name} is given twice.")
        merged[name] = value
    problem = headers_problem(merged)
    if problem:
        raise forms.ValidationError(problem)
    return merged


def left_behind(rows: list[dict[str, Any]], stored: dict[str, str]) -> list[str]:
    """The stored headers an edit that moves the row drops: those not removed whose value was not typed again."""
    kept = {row["original"] for row in rows if row["value"] and not row["remove"]}
    removed = {row["original"] for row in rows if row["remove"]}
    return [name for name in stored if name not in kept and name not in removed]


def moves(form: forms.ModelForm, address: str) -> bool:
    """Whether the form's row would point elsewhere (another origin of its ``address`` field) than it does now; a new
    row points nowhere yet. Called from a field's clean, before the instance takes the form's values."""
    if form.instance.pk is None or address not in form.cleaned_data:
        return False
    return origin(form.cleaned_data[address]) != origin(getattr(form.instance, address))


MOVE_HELP = (
    "Pointing the {what} at another server (another scheme, host or port) clears the stored {secrets}: type them "
    "again in the same form to keep them."
)


class PrettyJSONField(forms.JSONField):
    """A JSON field shown indented, so a schema can be read and edited in the textarea."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, indent=2, ensure_ascii=False)


class HttpToolForm(forms.ModelForm):
    secret_headers = SecretHeadersField(
        label="Headers",
        required=False,
        help_text="Values are secret: they are stored on the server and never shown again. Leave a value "
        "blank to keep it; tick remove to delete a header. If the form reports an error, type new values again.",
    )

    class Meta:
        model = HttpTool
        exclude = ["headers"]
        field_classes = {"parameters": PrettyJSONField}
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "url_template": forms.TextInput(attrs={"size": 80}),
            "parameters": forms.Textarea(attrs={"rows": 12, "cols": 80, "class": "vLargeTextField monospace"}),
            "body_template": forms.Textarea(attrs={"rows": 6, "cols": 80, "class": "vLargeTextField monospace"}),
        }

    clear_headers = forms.BooleanField(label="Remove the stored headers", required=False)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.cleared_by_move: list[str] = []  # stored headers this form did not carry to a new address
        field = self.fields["secret_headers"]
        field.initial = self._stored()
        if self.instance.pk is not None and "url_template" in self.fields:
            self.fields["url_template"].help_text += " " + MOVE_HELP.format(what="URL", secrets="header values")
        if self.instance.headers_are_unreadable:
            field.help_text = (
                f"The headers are {UNREADABLE} (names and values): configure the key that encrypted them again "
                '(docs/deploy.md, "Secrets at rest"), or type every header again to replace them. Leave the rows '
                "empty to keep them as they are."
            )

    def _stored(self) -> dict[str, str]:
        """The stored headers, or none when they cannot be decrypted."""
        return {} if self.instance.headers_are_unreadable else dict(self.instance.headers or {})

    def clean_secret_headers(self) -> Any:
        rows = self.cleaned_data.get("secret_headers") or []
        moved = moves(self, "url_template")  # the URL is cleaned before this field
        if self.data.get(self.add_prefix("clear_headers")):  # cleaned after this field
            headers: Any = {}
        elif self.instance.headers_are_unreadable and not any(row["name"] or row["value"] for row in rows):
            # Kept by not touching them (saved back as the same token); a move clears them (the model's rule).
            return self.instance.headers
        else:
            headers = merge_headers(rows, self._stored(), carry=not moved)
            if moved:  # the stored values stay with the server they were typed for
                self.cleared_by_move = [f"header {name}" for name in left_behind(rows, self._stored())]
        # Set before the model's own checks (HttpTool.clean) run on the instance.
        self.instance.headers = headers
        return headers


# --- "try it" -----------------------------------------------------------------------------


class TryToolForm(forms.Form):
    arguments = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "cols": 80, "class": "vLargeTextField monospace"}),
        help_text="A JSON object: the arguments the model would send.",
    )

    def clean_arguments(self) -> dict:
        try:
            value = json.loads(self.cleaned_data["arguments"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("The arguments must be a JSON object, e.g. {}.")
        return value


class TryItMixin:
    """A "try it" page at <id>/try/ for staff who may change the tool: runs it once, shows the result."""

    change_form_template = "admin/tools/change_form_with_try.html"

    def trial_tool(self, obj: Any, **kwargs: Any) -> Tool:
        """The tool to run for ``obj`` (``kwargs``: the rest of the try page's URL, e.g. which of an MCP server's
        tools); raises ValueError with the reason it cannot run."""
        raise NotImplementedError

    def get_urls(self):
        opts = self.model._meta
        name = f"{opts.app_label}_{opts.model_name}_try"
        return [
            path("<path:object_id>/try/", self.admin_site.admin_view(self.try_view), name=name),
            *super().get_urls(),
        ]

    @admin.display(description="try it")
    def try_link(self, obj: Any) -> str:
        opts = self.model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_try", args=[obj.pk])
        return format_html('<a href="{}">Try it</a>', url)

    def try_view(self, request: HttpRequest, object_id: str, **kwargs: Any) -> HttpResponse:
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404(f"No {self.model._meta.verbose_name} with id {object_id!r}.")
        if not self.has_change_permission(request, obj):
            raise PermissionDenied
        try:
            tool, problem = self.trial_tool(obj, **kwargs), ""
        except ValueError as exc:
            tool, problem = None, str(exc)
        example = json.dumps(services.example_arguments(tool.parameters) if tool else {}, indent=2)
        form = TryToolForm(request.POST or None, initial={"arguments": example})
        result = None
        if request.method == "POST" and tool is not None and form.is_valid():
            result = services.run_tool_trial(tool=tool, user=request.user, args=form.cleaned_data["arguments"])
        context = {
            **self.admin_site.each_context(request),
            "title": f"Try {obj}",
            "subtitle": None,
            "opts": self.model._meta,
            "original": obj,
            # Not the Tool itself: templates call callables, and a Tool is one.
            "tool": {"name": tool.name, "description": tool.description, "timeout": tool.timeout} if tool else None,
            "schema": json.dumps(tool.parameters, indent=2, ensure_ascii=False) if tool else "",
            "problem": problem,
            "form": form,
            "result": result,
        }
        return TemplateResponse(request, "admin/tools/try_tool.html", context)


# --- the model admins ---------------------------------------------------------------------


@admin.register(ToolSetting)
class ToolSettingAdmin(TryItMixin, admin.ModelAdmin):
    list_display = ["name", "enabled", "requires_approval", "timeout", "missing_flag", "group_names", "try_link"]
    list_editable = ["enabled", "requires_approval"]
    list_filter = ["enabled", "requires_approval", "missing", "groups"]
    search_fields = ["name", "description_override"]
    filter_horizontal = ["groups"]
    readonly_fields = ["name", "missing", "code_description", "code_timeout", "code_parameters"]
    fieldsets = [
        (None, {"fields": ["name", "missing", "enabled", "code_description", "description_override"]}),
        ("Approval", {"fields": list(APPROVAL_FIELDS)}),
        ("Execution", {"fields": ["code_timeout", "timeout", "code_parameters"]}),
        ("Who may use it", {"fields": ["groups"]}),
    ]

    # A tool the code still defines is the normal case: blank, and "missing" where the code no longer has it.
    missing_flag = flag("missing", description="missing", shown="missing", title="The code no longer defines this tool")

    def trial_tool(self, obj: ToolSetting) -> Tool:
        tool = services.tool_for_setting(setting=obj)
        if tool is None:
            raise ValueError(f"The code no longer defines a tool called {obj.name!r}.")
        return tool

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        # Rows follow the code: a tool added since start-up shows up without another migrate.
        services.sync_tool_settings()
        for stuck in TOOL_THREADS.stuck():
            messages.warning(request, stuck_calls_message(stuck))
        return super().changelist_view(request, extra_context)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # rows come from the code

    def has_delete_permission(self, request: HttpRequest, obj: ToolSetting | None = None) -> bool:
        # Only a row whose tool the code no longer defines may go; sync would re-create any other.
        if obj is not None and not obj.missing:
            return False
        return super().has_delete_permission(request, obj)

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def get_queryset(self, request: HttpRequest):
        return super().get_queryset(request).prefetch_related("groups")

    @admin.display(description="groups")
    def group_names(self, obj: ToolSetting) -> str:
        return cut_text(", ".join(group.name for group in obj.groups.all()) or "everyone")

    @admin.display(description="description in the code")
    def code_description(self, obj: ToolSetting) -> str:
        tool = services.code_tools().get(obj.name)
        return tool.description if tool else "—"

    @admin.display(description="deadline in the code (seconds)")
    def code_timeout(self, obj: ToolSetting) -> str:
        tool = services.code_tools().get(obj.name)
        return f"{tool.timeout:g}" if tool else "—"

    @admin.display(description="arguments (JSON Schema)")
    def code_parameters(self, obj: ToolSetting) -> str:
        tool = services.code_tools().get(obj.name)
        if tool is None:
            return "—"
        return format_html(
            '<pre style="white-space: pre-wrap">{}</pre>', json.dumps(tool.parameters, indent=2, ensure_ascii=False)
        )


def stuck_calls_message(stuck: StuckCalls) -> str:
    calls = "1 call" if stuck.calls == 1 else f"{stuck.calls} calls"
    verb = "is" if stuck.calls == 1 else "are"
    return (
        f"{calls} of the tool {stuck.tool} {verb} still running past its timeout of {stuck.timeout:g} s"
        f" (the oldest for {stuck.oldest:.0f} s), in this server process. A thread cannot be stopped: each such call"
        f" holds one of the {TOOL_THREADS.per_tool} threads the tool may use (AGENTWEB_TOOL_THREADS_PER_TOOL)"
        " until it returns; when all are held, its further calls time out without running. Other tools are not"
        " affected. Fix what the tool waits for, or restart the server."
    )


@admin.register(HttpTool)
class HttpToolAdmin(TryItMixin, admin.ModelAdmin):
    form = HttpToolForm
    list_display = ["name", "method", "url", "enabled", "requires_approval", "try_link"]
    list_editable = ["enabled"]
    list_filter = ["enabled", "method", "requires_approval", "groups"]
    search_fields = ["name", "description", "url_template"]
    filter_horizontal = ["groups"]
    readonly_fields = ["header_names"]

    def get_fieldsets(self, request: HttpRequest, obj: HttpTool | None = None) -> list:
        editable = self.has_change_permission(request, obj) if obj else self.has_add_permission(request)
        # A view-only page shows header names through header_names: the model field would print the values.
        headers = ["secret_headers"] if editable else ["header_names"]
        if editable and obj is not None and obj.headers_are_unreadable:
            headers.append("clear_headers")
        return [
            (None, {"fields": ["name", "description", "enabled"]}),
            ("Request", {"fields": ["method", "url_template", *headers, "body_template", "timeout"]}),
            ("Arguments", {"fields": ["parameters"]}),
            ("Approval", {"fields": list(APPROVAL_FIELDS)}),
            ("Who may use it", {"fields": ["groups"]}),
        ]

    def save_model(self, request: HttpRequest, obj: HttpTool, form: HttpToolForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if message := obj.cleared_secrets_message(form.cleared_by_move):
            messages.warning(request, message)

    def trial_tool(self, obj: HttpTool) -> Tool:
        try:
            return services.tool_for_http_tool(http_tool=obj)
        except (ValueError, TypeError, SchemaError) as exc:
            raise ValueError(f"This tool cannot be built: {exc}") from None

    @admin.display(description="URL template", ordering="url_template")
    def url(self, obj: HttpTool) -> str:
        """Without a `user:password@` a row saved before the form refused one may still hold."""
        return cut_text(public_url(obj.url_template))

    @admin.display(description="headers")
    def header_names(self, obj: HttpTool) -> str:
        if obj.headers_are_unreadable:
            return UNREADABLE
        if not obj.headers:
            return "—"
        return format_html_join(", ", "{}: {}", ((name, MASKED) for name in obj.headers))


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(PlainHelpTexts, admin.ModelAdmin):
    """Rules on argument values that decide, before the tool's own setting, whether a call waits."""

    help_texts = {
        "tool_name": "A code tool or an HTTP tool by its name, or an MCP server's tool as <server>__<tool>, the name "
        "the model sees (e.g. docs__search).",
    }

    list_display = ["tool_cut", "tool_exists", "argument_cut", "match", "pattern_cut", "action", "position", "enabled"]
    list_display_links = ["tool_cut"]
    tool_cut = cut("tool_name", description=_("tool name"), ordering="tool_name")
    argument_cut = cut("argument", description=_("argument"), ordering="argument")
    pattern_cut = cut("pattern", description=_("pattern"), ordering="pattern")
    list_editable = ["enabled", "position"]
    list_filter = ["tool_name", "action", "enabled"]
    search_fields = ["tool_name", "argument", "pattern", "note"]

    def get_queryset(self, request: HttpRequest):
        # Whether each rule's tool exists, read once for the whole list. A rule is refused on save when its tool
        # does not exist (ApprovalRule.clean); one whose tool has gone since is kept, and marked here.
        known = Case(When(tool_name__in=known_tool_names(), then=Value(True)), default=Value(False))
        return super().get_queryset(request).annotate(tool_known=known)

    @admin.display(description="tool exists", boolean=True)
    def tool_exists(self, obj: ApprovalRule) -> bool:
        return obj.tool_known


@admin.register(AllowedHost)
class AllowedHostAdmin(admin.ModelAdmin):
    list_display = ["host", "note_cut", "created_at"]
    note_cut = cut("note", description=_("note"), ordering="note")
    search_fields = ["host", "note"]


@admin.register(MemoryItem)
class MemoryItemAdmin(admin.ModelAdmin):
    """What users' tools remembered: visible to look into and delete, never written from here."""

    list_display = ["owner", "key_cut", "updated_at"]
    list_display_links = ["key_cut"]
    key_cut = cut("key", description=_("key"), ordering="key")
    list_select_related = ["owner"]
    list_filter = ["owner"]
    search_fields = ["key", "owner__username"]
    readonly_fields = ["owner", "key", "value", "created_at", "updated_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: MemoryItem | None = None) -> bool:
        return False
