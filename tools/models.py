"""The tool registry's rows: settings of code-defined tools, admin-defined HTTP tools, the SSRF allow-list,
and the per-user key-value store."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from agentweb.fields import EncryptedJSONField
from agentweb.pinned_secrets import PinnedSecrets, PinnedSecretsQuerySet
from agentweb.secretbox import UnreadableSecret
from providers.secrets import origin
from tools.approval_rules import argument_problem, tool_name_problem
from tools.http_tool import body_placeholders, render_body, url_placeholders

TOOL_NAME = RegexValidator(r"^[A-Za-z0-9_-]{1,64}$", "Use 1-64 letters, digits, '_' or '-'.")
# RFC 7230 token characters: what a header name may be made of.
HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
MAX_TIMEOUT = 600.0
TIMEOUT_VALIDATORS = [MinValueValidator(0.1), MaxValueValidator(MAX_TIMEOUT)]


class ApprovalChoices(models.Model):
    """Whether a call waits for a person, and what that person may do (LangGraph's HumanInterruptConfig)."""

    requires_approval = models.BooleanField(default=False)
    allow_approve = models.BooleanField(_("may approve"), default=True)
    allow_edit = models.BooleanField(_("may edit the arguments"), default=True)
    allow_reject = models.BooleanField(_("may reject"), default=True)
    allow_respond = models.BooleanField(_("may answer instead of the tool"), default=True)

    class Meta:
        abstract = True

    def approval_config(self) -> dict[str, bool]:
        return {
            "approve": self.allow_approve,
            "edit": self.allow_edit,
            "reject": self.allow_reject,
            "respond": self.allow_respond,
        }

    def clean(self) -> None:
        super().clean()
        if self.requires_approval and not any(self.approval_config().values()):
            raise ValidationError("A tool that requires approval must offer at least one choice.")


class ToolSetting(ApprovalChoices):
    """The admin's settings for one code-defined tool. Rows are made by sync_tool_settings, never by hand."""

    name = models.CharField(max_length=64, unique=True, validators=[TOOL_NAME])
    enabled = models.BooleanField(default=True)
    timeout = models.FloatField(
        null=True, blank=True, validators=TIMEOUT_VALIDATORS, help_text=_("Seconds. Empty: the tool's own deadline.")
    )
    description_override = models.TextField(
        blank=True, help_text=_("What the model reads about the tool. Empty: the description written in the code.")
    )
    groups = models.ManyToManyField(
        Group, blank=True, related_name="tool_settings", help_text=_("Who may use the tool. None selected: everyone.")
    )
    # The code no longer defines this tool (a module was removed from AGENTWEB_TOOL_MODULES, a tool renamed).
    # The row is kept, so the admin's choices come back if the tool does.
    missing = models.BooleanField(default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("code tool")

    def __str__(self) -> str:
        return self.name


class HttpTool(PinnedSecrets, ApprovalChoices):
    """A tool defined entirely in the admin: an HTTP request built from the model's arguments. Its headers are sent
    to the origin of its URL: a change of it clears headers not given again with it (agentweb/pinned_secrets.py)."""

    ADDRESS_FIELDS = ("url_template",)
    PINNED_SECRETS = {"headers": dict}

    class Method(models.TextChoices):
        GET = "GET"
        POST = "POST"
        PUT = "PUT"
        PATCH = "PATCH"
        DELETE = "DELETE"

    name = models.CharField(max_length=64, unique=True, validators=[TOOL_NAME])
    description = models.TextField(help_text=_("What the model reads: when to use the tool and what it returns."))
    parameters = models.JSONField(
        default=dict,
        help_text=_('A JSON Schema object, e.g. {"type": "object", "properties": {...}, "required": [...]}'),
    )
    method = models.CharField(max_length=8, choices=Method.choices, default=Method.GET)
    url_template = models.CharField(
        _("URL template"),
        max_length=2000,
        help_text=_(
            "e.g. https://api.example.com/items/{item_id} — each {name} is replaced by the URL-quoted "
            "argument. The scheme and host are fixed: no placeholders there."
        ),
    )
    # Header name → value. Every value is a secret: written in the admin, never shown again. The whole mapping is
    # encrypted at rest as one token (agentweb/fields.py): an UnreadableSecret when the key that encrypted it is
    # not configured, and the tool then answers every call with that problem (tools/http_tool.py).
    headers = EncryptedJSONField(default=dict, blank=True)
    body_template = models.TextField(
        blank=True,
        help_text=_(
            'JSON with {name} placeholders, e.g. {"title": {title}, "note": "by {author}"}: a placeholder '
            "becomes the argument as JSON (inside a string: its text). Empty: the arguments not used in the URL "
            "are sent as the JSON body (POST, PUT, PATCH) or as query parameters (GET, DELETE)."
        ),
    )
    enabled = models.BooleanField(default=True)
    timeout = models.FloatField(
        null=True, blank=True, validators=TIMEOUT_VALIDATORS, help_text=_("Seconds. Empty: 30 seconds.")
    )
    groups = models.ManyToManyField(
        Group, blank=True, related_name="http_tools", help_text=_("Who may use the tool. None selected: everyone.")
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PinnedSecretsQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("HTTP tool")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        errors: dict[str, list[str]] = {}
        for field, problem in [
            ("name", self._name_problem()),
            ("parameters", parameters_problem(self.parameters)),
            ("url_template", self._url_problem()),
            ("body_template", self._body_problem()),
            ("headers", None if self.headers_are_unreadable else headers_problem(self.headers)),
        ]:
            if problem:
                errors.setdefault(field, []).append(problem)
        if errors:
            raise ValidationError(errors)

    @property
    def headers_are_unreadable(self) -> bool:
        return isinstance(self.headers, UnreadableSecret)

    def points_at(self) -> Any:
        return origin(self.url_template)

    def property_names(self) -> set[str]:
        properties = self.parameters.get("properties") if isinstance(self.parameters, dict) else None
        return set(properties) if isinstance(properties, dict) else set()

    def _name_problem(self) -> str | None:
        if self.name and self.name in _code_tools():
            return f"A code-defined tool is already called {self.name!r}."
        return None

    def _url_problem(self) -> str | None:
        url = self.url_template or ""
        match = re.match(r"^(https?)://([^/?#]*)", url, re.IGNORECASE)
        if not match:
            return "The URL must start with http:// or https:// and a host."
        if "{" in match.group(2) or "}" in match.group(2) or not match.group(2):
            return "The host is fixed: placeholders may only stand in the path and the query."
        if "@" in match.group(2):
            return (
                "The URL must not carry a user name or password (the tool list shows the URL): put them in an "
                "Authorization header, whose value is stored encrypted."
            )
        return _unknown_placeholders(url_placeholders(url), self.property_names())

    def _body_problem(self) -> str | None:
        if not self.body_template.strip():
            return None
        if self.method in (self.Method.GET, self.Method.DELETE):
            return f"A {self.method} request has no body: leave the body template empty."
        unknown = _unknown_placeholders(body_placeholders(self.body_template), self.property_names())
        if unknown:
            return unknown
        try:
            render_body(self.body_template, {})
        except ValueError as exc:
            return str(exc)
        return None


def _unknown_placeholders(found: set[str], known: set[str]) -> str | None:
    unknown = sorted(found - known)
    if unknown:
        return "Not a parameter of the schema: " + ", ".join("{" + name + "}" for name in unknown)
    return None


def parameters_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be a tool's parameters, or None."""
    if not isinstance(schema, dict):
        return "The parameters must be a JSON object."
    if schema.get("type") != "object":
        return 'The parameters schema must have "type": "object".'
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.path)
        return f"Not a valid JSON Schema: {exc.message}" + (f" (at {where})" if where else "")
    properties = schema.get("properties", {})
    bad = sorted(name for name in properties if not re.match(r"^[A-Za-z_][A-Za-z0-9_-]*$", name))
    if bad:
        return "Parameter names must start with a letter or '_' and hold only letters, digits, '_', '-': " + ", ".join(
            json.dumps(name) for name in bad
        )
    return None


def headers_problem(headers: Any) -> str | None:
    if not isinstance(headers, dict):
        return "The headers must be a mapping of names to values."
    for name, value in headers.items():
        if not HEADER_NAME.match(name):
            return f"{name!r} is not a valid header name."
        if not isinstance(value, str) or "\n" in value or "\r" in value:
            return f"The value of {name} must be one line of text."
    return None


def normalise_host(host: str) -> str:
    """Lower case, no trailing dot, IPv6 without brackets: the form hosts are compared in."""
    host = host.strip().lower().rstrip(".")
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


class AllowedHost(models.Model):
    """A host the SSRF guard lets through although it resolves to a private or local address."""

    host = models.CharField(
        max_length=253, unique=True, help_text=_("A host name or IP address, exactly (no scheme, port or path).")
    )
    note = models.CharField(max_length=300, blank=True, help_text=_("Why this host may be reached."))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["host"]

    def __str__(self) -> str:
        return self.host

    def clean(self) -> None:
        super().clean()
        self.host = normalise_host(self.host)
        try:
            ipaddress.ip_address(self.host)
            return
        except ValueError:
            pass
        label = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
        if not re.fullmatch(rf"{label}(\.{label})*", self.host):
            raise ValidationError({"host": "Give a host name or an IP address only, e.g. api.internal or 10.0.0.5."})


class MemoryItem(models.Model):
    """One entry of a user's key-value store (the remember / recall / forget tools)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_items")
    key = models.CharField(max_length=200)
    value = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["owner", "key"]
        constraints = [models.UniqueConstraint(fields=["owner", "key"], name="memory_key_unique_per_owner")]

    def __str__(self) -> str:
        return self.key


class ApprovalRule(models.Model):
    """Decides by a call's argument values whether it waits for a person, before the tool's own setting."""

    class Match(models.TextChoices):
        EQUALS = "equals", "is exactly"
        PREFIX = "prefix", "starts with"
        HOST = "host", "is a URL on the host (or its subdomains)"
        REGEX = "regex", "matches the regular expression"

    class Action(models.TextChoices):
        ALLOW = "allow", "run without asking"
        ASK = "ask", "ask for approval"

    tool_name = models.CharField(max_length=64, help_text=_("A code tool or an HTTP tool, by name."))
    argument = models.CharField(max_length=64, help_text=_("The argument whose value is checked, e.g. url."))
    match = models.CharField(max_length=8, choices=Match.choices, default=Match.HOST)
    pattern = models.CharField(max_length=500)
    action = models.CharField(max_length=8, choices=Action.choices, default=Action.ALLOW)
    position = models.PositiveIntegerField(default=0, help_text=_("Rules of a tool are tried in this order."))
    enabled = models.BooleanField(default=True)
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["tool_name", "position", "id"]

    def __str__(self):
        return f"{self.tool_name}: {self.argument} {self.get_match_display()} {self.pattern!r} → {self.action}"

    def clean(self):
        super().clean()
        errors: dict[str, str] = {}
        # An empty name or argument is already refused as a required field.
        if self.tool_name and self.argument and self._stored_target() != (self.tool_name, self.argument):
            if problem := tool_name_problem(self.tool_name, known_tool_names()):
                server = unconnected_mcp_server(self.tool_name)
                errors["tool_name"] = (
                    f"MCP server {server!r} is not connected yet; its tools' arguments are unknown. Save the rule "
                    "once the admin's list of MCP servers shows it connected."
                    if server
                    else problem
                )
            elif problem := argument_problem(self.tool_name, self.argument, tool_arguments(self.tool_name)):
                errors["argument"] = problem
        if self.match == self.Match.REGEX:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                errors["pattern"] = f"Not a valid regular expression: {exc}"
        if errors:
            raise ValidationError(errors)

    def _stored_target(self) -> tuple[str, str] | None:
        """The tool and argument this rule was saved with; None for a new rule. Only a new target is checked: a
        rule saved for a tool that has gone since stays editable (to switch it off, or keep it for when the tool
        comes back), and the admin's list marks it."""
        if self.pk is None:
            return None
        return ApprovalRule.objects.filter(pk=self.pk).values_list("tool_name", "argument").first()

    def to_rule(self):
        from tools.approval_rules import ArgumentRule

        return ArgumentRule(argument=self.argument, match=self.match, pattern=self.pattern, action=self.action)


def known_tool_names() -> set[str]:
    """Every tool name a rule may name: the code tools of this process, the rows of code tools any process
    synced (one started with more AGENTWEB_TOOL_MODULES; a tool the code has lost, whose settings are kept), and
    the HTTP tools."""
    names = set(_code_tools().names())
    names.update(ToolSetting.objects.values_list("name", flat=True))
    names.update(HttpTool.objects.values_list("name", flat=True))
    names.update(_mcp_tools())
    return names


def _code_tools():
    """This process's code tools (tools/services.py code_tools), imported late: they may import user modules."""
    from tools.services import code_tools

    return code_tools()


def _mcp_tools() -> dict:
    """The MCP servers' tools this process knows (those of servers it has connected to), by name."""
    from tools.services import mcp_tools

    return {tool.name: tool for tool in mcp_tools().tools}


def unconnected_mcp_server(tool_name: str) -> str | None:
    """The MCP server whose tool ``tool_name`` would be, when that server has not connected in this process yet
    (its tools and their arguments are not known), else None."""
    from tools.services import mcp_tools

    return next((server for prefix, server in mcp_tools().unconnected if tool_name.startswith(prefix)), None)


def tool_arguments(tool_name: str) -> set[str] | None:
    """The argument names of a tool, None when this process does not know its schema (a code tool that only
    another process loads, or that the code has lost)."""
    code_tool = _code_tools().get(tool_name)
    if code_tool is not None:
        properties = code_tool.parameters.get("properties")
        return set(properties) if isinstance(properties, dict) else set()
    http_tool = HttpTool.objects.filter(name=tool_name).first()
    if http_tool is not None:
        return http_tool.property_names()
    mcp_tool = _mcp_tools().get(tool_name)
    if mcp_tool is None:
        return None
    properties = mcp_tool.parameters.get("properties")
    return set(properties) if isinstance(properties, dict) else set()


class SettingsStamp(models.Model):
    """One row whose stamp changes with every write to what the settings cache keeps answers of (tool settings,
    HTTP tools, approval rules, allowed hosts, groups, agents, model configurations, MCP servers, budgets): each
    process keeps those answers under the stamp it read (tools/settings_cache.py), and reads the stamp once per run
    or page. A database trigger on each of those tables changes it (tools/settings_cache.py install_triggers), so
    QuerySet.update(), bulk writes and raw SQL change it too."""

    stamp = models.CharField(max_length=32)

    def __str__(self) -> str:
        return self.stamp


def bump_settings_stamp(*, using: str = "default", **_: Any) -> None:
    """A new stamp (the row made if a flush removed it): every process reads its settings afresh. The triggers do
    this for every write to the watched tables; this is for a change they cannot see."""
    import uuid

    stamp = uuid.uuid4().hex
    rows = SettingsStamp.objects.using(using)
    if not rows.filter(pk=1).update(stamp=stamp):
        rows.update_or_create(pk=1, defaults={"stamp": stamp})
