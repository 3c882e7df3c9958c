"""Agents as files: `manage.py agents export [FILE]` and `agents import FILE` (JSON, or YAML), so that teams keep
their agents in git (docs/agents.md has the format). An import is checked whole before anything is written, and
written in one transaction: a file with one bad entry (an unknown field, tool, model or owner, a value out of
range) changes nothing and says which entry and why."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction

from modelconfig.models import ModelConfiguration

from .models import Agent

FIELDS = (
    "slug",
    "name",
    "description",
    "starter_prompts",
    "model",
    "system_prompt",
    "tools",
    "step_limit",
    "approvals",
    "temperature",
    "top_p",
    "max_output_tokens",
    "response_schema",
    "context_strategy",
    "owner",
    "default",
    "groups",
)
REQUIRED = ("slug", "name")
#: The largest file `agents import` reads: thousands of agents fit; it is refused, unread, beyond.
MAX_FILE_BYTES = 2 * 1024 * 1024


class TransferError(Exception):
    """The file is refused whole: each problem names its entry."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)


def is_yaml(path: str) -> bool:
    return path.lower().endswith((".yaml", ".yml"))


def _yaml():
    try:
        import yaml
    except ImportError:  # pragma: no cover - pinned in requirements.txt
        raise TransferError(["YAML needs PyYAML (pip install PyYAML); JSON works without it."]) from None
    return yaml


def read_file(path: str) -> str:
    """The file's text, refused (TransferError) before it is read when it is larger than MAX_FILE_BYTES."""
    try:
        with open(path, "rb") as source:
            data = source.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise TransferError([f"{path}: {error.strerror}"]) from None
    if len(data) > MAX_FILE_BYTES:
        raise TransferError([f"The file is larger than {MAX_FILE_BYTES:,} bytes; split it into several."])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise TransferError(["The file is not UTF-8 text."]) from None


def _safe_yaml(text: str) -> Any:
    """YAML without anchors and aliases: an alias repeats a node without its text growing, so a few hundred bytes of
    nested aliases ("billion laughs") would expand to more than memory holds. No agent file needs them."""
    yaml = _yaml()

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                refused = "anchors and aliases (&name, *name) are not accepted; write the values out"
                raise yaml.composer.ComposerError(None, None, refused, event.start_mark)
            return super().compose_node(parent, index)

    return yaml.load(text, Loader=NoAliasLoader)  # a SafeLoader


# --- export ----------------------------------------------------------------------------------------


def export_entries() -> list[dict[str, Any]]:
    entries = []
    agents = Agent.objects.select_related("model", "owner").prefetch_related("groups").order_by("owner_id", "slug")
    for agent in agents:
        entries.append(
            {
                "slug": agent.slug,
                "name": agent.name,
                "description": agent.description,
                "starter_prompts": list(agent.starter_prompts or []),
                "model": agent.model.name if agent.model else None,
                "system_prompt": agent.system_prompt,
                "tools": "all" if agent.all_tools else list(agent.tools),
                "step_limit": agent.step_limit,
                "approvals": dict(agent.approvals),
                "temperature": agent.temperature,
                "top_p": agent.top_p,
                "max_output_tokens": agent.max_output_tokens,
                "response_schema": agent.response_schema,
                "context_strategy": dict(agent.context_strategy or {}),
                "owner": agent.owner.get_username() if agent.owner else None,
                "default": agent.is_default,
                "groups": sorted(agent.group_names()),
            }
        )
    return entries


def dumps(entries: list[dict[str, Any]], *, yaml: bool = False) -> str:
    document = {"agents": entries}
    if yaml:
        return _yaml().safe_dump(document, sort_keys=False, allow_unicode=True)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# --- import ----------------------------------------------------------------------------------------


def loads(text: str, *, yaml: bool = False) -> list[Any]:
    try:
        document = _safe_yaml(text) if yaml else json.loads(text)
    except TransferError:
        raise
    except Exception as error:  # json.JSONDecodeError, yaml.YAMLError
        raise TransferError([f"The file cannot be read as {'YAML' if yaml else 'JSON'}: {error}"]) from None
    if isinstance(document, dict) and set(document) == {"agents"}:
        document = document["agents"]
    if not isinstance(document, list):
        raise TransferError(['The file holds {"agents": [ … ]} (or a list of agents).'])
    return document


def import_entries(entries: list[Any]) -> ImportReport:
    """Create or update (by slug) every agent of `entries`, or none: TransferError lists every problem."""
    problems: list[str] = []
    agents: list[Agent] = []
    seen: dict[str, str] = {}
    defaults = []
    users = get_user_model()
    for number, entry in enumerate(entries, start=1):
        where = f"entry {number}"
        if isinstance(entry, dict) and isinstance(entry.get("slug"), str):
            where += f" ({entry['slug']!r})"
        agent, found = _agent(entry, where, users)
        problems += found
        if agent is None:
            continue
        key = (agent.owner_id, agent.slug)  # a slug is unique among the shared agents and among each person's own
        if key in seen:
            problems.append(f"{where}: the slug is also that of {seen[key]}.")
        seen[key] = where
        if agent.is_default:
            defaults.append(where)
        agents.append(agent)
    if len(defaults) > 1:
        problems.append(f"{', '.join(defaults)}: only one agent can be the default.")
    if problems:
        raise TransferError(problems)
    report = ImportReport()
    with transaction.atomic():
        for agent in agents:
            (report.updated if agent.pk else report.created).append(agent.slug)
            agent.save()
            agent.groups.set(agent.imported_groups)
    return report


def _agent(entry: Any, where: str, users) -> tuple[Agent | None, list[str]]:
    if not isinstance(entry, dict):
        return None, [f"{where}: an agent is an object with {', '.join(REQUIRED)} and more."]
    problems = [f"{where}: unknown field {key!r} (known: {', '.join(FIELDS)})." for key in entry if key not in FIELDS]
    problems += [f"{where}: {key!r} is required." for key in REQUIRED if not entry.get(key)]
    if problems:
        return None, problems
    owner = entry.get("owner")
    found_owner = None
    if owner is not None:
        found_owner = users.objects.filter(**{users.USERNAME_FIELD: owner}).first() if isinstance(owner, str) else None
        if found_owner is None:
            return None, [f"{where}: no user is named {owner!r}."]
    # By slug among the agents of the same owner (or the shared ones): another person's agent of that slug is theirs.
    agent = Agent.objects.filter(slug=entry["slug"], owner=found_owner).first() or Agent(slug=entry["slug"])
    agent.owner = found_owner
    texts = ("name", "description", "system_prompt")
    for key in texts:
        value = entry.get(key, "" if key != "name" else None)
        if not isinstance(value, str):
            problems.append(f"{where}: {key!r} must be text.")
        else:
            setattr(agent, key, value)
    for key in ("step_limit", "max_output_tokens"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            problems.append(f"{where}: {key!r} must be a whole number or null.")
        else:
            setattr(agent, key, value)
    for key in ("temperature", "top_p"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            problems.append(f"{where}: {key!r} must be a number or null.")
        else:
            setattr(agent, key, value)
    tools = entry.get("tools", "all")
    if tools == "all":
        agent.all_tools, agent.tools = True, []
    elif isinstance(tools, list) and all(isinstance(name, str) for name in tools):
        agent.all_tools, agent.tools = False, tools
    else:
        problems.append(f"{where}: 'tools' is \"all\" or a list of tool names.")
    agent.approvals = entry.get("approvals") or {}
    agent.starter_prompts = entry.get("starter_prompts") or []  # checked by full_clean (starter_problems)
    agent.response_schema = entry.get("response_schema")
    agent.context_strategy = entry.get("context_strategy") or {}
    default = entry.get("default", False)
    if not isinstance(default, bool):
        problems.append(f"{where}: 'default' is true or false.")
    agent.is_default = default is True
    model = entry.get("model")
    agent.model = None
    if model is not None:
        agent.model = ModelConfiguration.objects.filter(name=model).first() if isinstance(model, str) else None
        if agent.model is None:
            problems.append(f"{where}: no model configuration is named {model!r}.")
    problems += _groups(agent, entry.get("groups", []), where)
    if problems:
        return None, problems
    try:
        agent.full_clean()
    except ValidationError as error:
        for name, messages in error.message_dict.items():
            label = {"all_tools": "tools", "is_default": "default", "model": "model"}.get(name, name)
            problems += [f"{where}: {label}: {message}" for message in messages]
    return (None if problems else agent), problems


def _groups(agent: Agent, names: Any, where: str) -> list[str]:
    """The entry's `groups` (who may use a shared agent: docs/teams.md) set on `agent.imported_groups`; the problems:
    names that are no group, groups on a person's own agent, and a person's own agent whose model their groups do not
    allow (a file cannot hand anyone a model the admin kept from them)."""
    agent.imported_groups = []
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return [f"{where}: 'groups' is a list of group names."]
    found = {group.name: group for group in Group.objects.filter(name__in=names)}
    problems = [f"{where}: no group is named {name!r}." for name in names if name not in found]
    if names and agent.owner is not None:
        problems.append(f"{where}: 'groups' are for shared agents (no owner); a person's own agent is theirs.")
    if agent.owner is not None and agent.model is not None:
        theirs = frozenset(agent.owner.groups.values_list("name", flat=True))
        if not agent.model.may_use(theirs):
            problems.append(
                f"{where}: {agent.owner.get_username()!r} may not use the model {agent.model.name!r} (its groups)."
            )
    agent.imported_groups = list(found.values())
    return problems
