"""An MCP server's configuration, and the `mcpServers` JSON format other MCP clients use.

    {"mcpServers": {"files": {"command": "npx", "args": ["-y", "@scope/server"], "env": {"KEY": "…"}},
                    "search": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer …"},
                               "requireApproval": false}}}

Plain Python: the admin's rows (mcpservers/) and the file of AGENTWEB_MCP_CONFIG both become
McpServerConfig values, and the connection layer knows nothing else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tools.groups import may_use

__all__ = [
    "DEFAULT_TIMEOUT",
    "SERVER_NAME",
    "McpConfigError",
    "McpServerConfig",
    "PerPerson",
    "load_config_file",
    "parse_mcp_servers",
]

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
# A server's name starts every tool name of it (<server>__<tool>), so it keeps to the providers' characters; with
# no "_" at either end and no "__" inside, the first "__" of a tool name is where the server's name ends.
SERVER_NAME = re.compile(r"^(?!.*__)[A-Za-z0-9](?:[A-Za-z0-9_-]{0,38}[A-Za-z0-9-])?$")
Transport = Literal["stdio", "http"]
# "Each person connects": the server is reached with the person's own credentials, never a shared connection.
# "oauth": the MCP authorization specification (OAuth 2.1, the SDK's client: tools/mcp/oauth.py); "header": a value
# each person enters, sent as the header `person_header`. "": one connection for everyone (the configured headers).
PerPerson = Literal["", "oauth", "header"]
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")


class McpConfigError(ValueError):
    """A configuration that cannot be used; each of its `problems` names the server and the field (the message is
    them all, one a line)."""

    def __init__(self, *problems: str):
        self.problems = list(problems)
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # stdio: the whole environment but PATH
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)  # http
    timeout: float = DEFAULT_TIMEOUT  # seconds, for one call
    enabled: bool = True
    offered_tools: frozenset[str] | None = None  # the server's own tool names; None: all of them
    require_approval: bool = True
    approval_exempt: frozenset[str] = frozenset()  # the server's own tool names that never ask
    source: Literal["admin", "file"] = "admin"
    per_person: PerPerson = ""
    person_header: str = ""  # per_person "header": the header the person's value is sent as
    # The names of the groups whose members may use its tools; empty: everyone (the rule: tools/groups.py).
    groups: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise McpConfigError(*problems)

    def problems(self) -> list[str]:
        """Every way this configuration cannot be used (none: [])."""
        where = f"MCP server {self.name!r}"
        found = []
        if not SERVER_NAME.match(self.name or ""):
            found.append(
                f"{where}: the name must be 1-40 letters, digits, '_' or '-', with no '_' first or last and no '__'."
            )
        if self.transport not in ("stdio", "http"):
            found.append(f"{where}: transport must be 'stdio' or 'http', got {self.transport!r}.")
        if self.transport == "stdio" and not self.command.strip():
            found.append(f"{where}: 'command' is required for a stdio server.")
        if self.transport == "http" and not re.match(r"^https?://[^/?#\s]+", self.url or "", re.IGNORECASE):
            found.append(f"{where}: 'url' must be an http:// or https:// address.")
        if not 0 < self.timeout <= MAX_TIMEOUT:
            found.append(f"{where}: 'timeout' must be between 0 and {MAX_TIMEOUT:g} seconds, got {self.timeout!r}.")
        if self.per_person not in ("", "oauth", "header"):
            found.append(f"{where}: 'perPerson' must be 'oauth' or 'header', got {self.per_person!r}.")
        elif self.per_person and self.transport != "http":
            found.append(f"{where}: each person connects only to a streamable HTTP server (a stdio server is shared).")
        elif self.per_person == "header" and not HEADER_NAME.match(self.person_header or ""):
            found.append(f"{where}: 'personHeader' must name the header each person's value is sent as.")
        for label, mapping in (("env", self.env), ("headers", self.headers)):
            for key, value in mapping.items():
                if not isinstance(key, str) or not key or not isinstance(value, str):
                    found.append(f"{where}: '{label}' must map names to strings ({key!r} does not).")
                elif label == "headers" and ("\n" in value or "\r" in value):
                    found.append(f"{where}: the header {key} must be one line.")
                elif label == "env" and ("=" in key or "\0" in key + value):
                    found.append(f"{where}: {key!r} is not a valid environment variable.")
        return found

    def connection_key(self) -> tuple:
        """What the connection depends on: a change of anything else (timeout, approval, offered tools) keeps it."""
        return (
            self.transport,
            self.command,
            self.args,
            tuple(sorted(self.env.items())),
            self.url,
            tuple(sorted(self.headers.items())),
            self.per_person,
            self.person_header,
        )

    def may_use(self, groups: frozenset[str]) -> bool:
        """Whether a person in `groups` gets this server's tools."""
        return may_use(self.groups, groups)

    def offers(self, tool: str) -> bool:
        return self.offered_tools is None or tool in self.offered_tools

    def requires_approval(self, tool: str) -> bool:
        return self.require_approval and tool not in self.approval_exempt


def parse_mcp_servers(data: Any, *, source: Literal["admin", "file"] = "file") -> list[McpServerConfig]:
    """The servers of an ``{"mcpServers": {...}}`` document. Raises McpConfigError with every mistake of every
    server, each naming the server and field."""
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise McpConfigError('The configuration must be a JSON object with an "mcpServers" object in it.')
    configs, problems = [], []
    for name, entry in data["mcpServers"].items():
        try:
            configs.append(_one(name, entry, source))
        except McpConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise McpConfigError(*problems)
    return configs


def load_config_file(path: str) -> list[McpServerConfig]:
    """The servers of the mcpServers file at ``path``. Raises McpConfigError saying what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise McpConfigError(f"The MCP configuration {path} cannot be read: {exc.strerror or exc}.") from None
    except json.JSONDecodeError as exc:
        raise McpConfigError(
            f"The MCP configuration {path} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
        ) from None
    try:
        return parse_mcp_servers(data)
    except McpConfigError as exc:
        raise McpConfigError(*(f"{path}: {problem}" for problem in exc.problems)) from None


_KNOWN = {
    "command",
    "args",
    "env",
    "url",
    "headers",
    "type",
    "transport",
    "timeout",
    "enabled",
    "disabled",
    "requireApproval",
    "approvalExempt",
    "offeredTools",
    "tools",
    "perPerson",
    "personHeader",
    "groups",
}


def _one(name: Any, entry: Any, source: Literal["admin", "file"]) -> McpServerConfig:
    """One server of the file; McpConfigError with every mistake of its entry."""
    where = f"MCP server {name!r}"
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where}: its entry must be a JSON object.")
    problems: list[str] = []
    unknown = sorted(set(entry) - _KNOWN)
    if unknown:
        problems.append(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}.")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        problems.append(f"{where}: give either 'command' (a stdio server) or 'url' (streamable HTTP), not both.")
    kind = entry.get("type", entry.get("transport"))
    if kind not in (None, "stdio", "http", "streamable-http", "streamableHttp"):
        problems.append(f"{where}: 'type' {kind!r} is not supported (stdio or streamable HTTP only).")

    def strings(key: str) -> tuple[str, ...]:
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(f"{where}: '{key}' must be a list of strings.")
            return ()
        return tuple(value)

    def mapping(key: str) -> dict[str, str]:
        value = entry.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            problems.append(f"{where}: '{key}' must be an object of strings.")
            return {}
        return dict(value)

    def flag(key: str, default: bool) -> bool:
        value = entry.get(key, default)
        if not isinstance(value, bool):
            problems.append(f"{where}: '{key}' must be true or false.")
            return default
        return value

    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        problems.append(f"{where}: 'timeout' must be a number of seconds.")
        timeout = DEFAULT_TIMEOUT
    offered_key = "offeredTools" if "offeredTools" in entry else "tools"
    offered = frozenset(strings(offered_key)) if offered_key in entry else None
    command = entry.get("command", "")
    url = entry.get("url", "")
    if not isinstance(command, str) or not isinstance(url, str):
        problems.append(f"{where}: 'command' and 'url' must be strings.")
        command, url = str(command), str(url)
    enabled, disabled = flag("enabled", True), flag("disabled", False)
    values = {
        "name": str(name),
        "transport": "stdio" if has_command else "http",
        "command": command,
        "args": strings("args"),
        "env": mapping("env"),
        "url": url,
        "headers": mapping("headers"),
        "timeout": float(timeout),
        "enabled": enabled and not disabled,
        "offered_tools": offered,
        "require_approval": flag("requireApproval", True),
        "approval_exempt": frozenset(strings("approvalExempt")),
        "source": source,
        "per_person": entry.get("perPerson", "") or "",
        "person_header": entry.get("personHeader", "") if isinstance(entry.get("personHeader", ""), str) else "",
        "groups": frozenset(strings("groups")),
    }
    if has_command != has_url:  # else which fields apply is unknown: the checks of the config would only guess
        try:
            config = McpServerConfig(**values)
        except McpConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise McpConfigError(*problems)
    return config
