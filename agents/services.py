"""What a run, a page and a file need of agents. Synchronous ORM code: async callers go through
database_sync_to_async.

A run reads its thread's agent as an AgentSpec, kept in this process's settings cache per settings stamp (every
write to the agents' table gives a new stamp: tools/settings_cache.py), so a turn on a thread adds no statement for
it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from languages.phrases import Phrase
from providers.config import ModelConfig
from tools.groups import NotPermitted, may_use
from tools.mcp.names import server_prefix
from tools.mcp.tools import server_tools
from tools.models import HttpTool
from tools.registry import ToolRegistry
from tools.services import DEFAULT_APPROVAL, code_tools, mcp_connections, mcp_server_configs
from tools.settings_cache import SETTINGS_CACHE

from .models import APPROVAL_VALUES, MAX_STARTER_PROMPTS, REQUIRE, STARTER_PROMPT_CHARS, Agent, visible_to

#: The error result of a call of a tool the thread's agent does not have.
NOT_AVAILABLE = "Tool {name!r} is not available to this agent."


class UnknownAgent(Exception):
    """A slug that names no agent the person may pick (none of that slug, another person's, or a shared one their
    groups do not allow: the same answer)."""


class AgentNotAllowed(NotPermitted):
    """The agent a thread has is one the person's groups do not allow (now): no run of it starts."""

    def __init__(self, name: str):
        super().__init__(
            Phrase(
                gettext_noop("The agent %(name)s is not available to you; start a new chat with another agent."),
                name=repr(name),
            )
        )


@dataclass(frozen=True)
class AgentSpec:
    """An agent as a run reads it."""

    id: int
    slug: str
    name: str
    system_prompt: str  # blank: the global AGENTWEB_SYSTEM_PROMPT
    model_id: str | None  # a model configuration's id, None: the default
    tools: frozenset[str] | None  # None: every tool the person may use
    step_limit: int | None
    approvals: dict[str, str]
    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    response_schema: dict | None = None  # the structured final answer's JSON Schema (providers/structured.py)
    context_strategy: dict = dataclasses.field(default_factory=dict)  # providers/context_strategy.py; {}: trim
    owner_id: int | None = None  # None: a shared agent
    groups: frozenset[str] = frozenset()  # a shared agent's: who may use it (none: everyone)

    @classmethod
    def of(cls, agent: Agent) -> AgentSpec:
        return cls(
            owner_id=agent.owner_id,
            groups=agent.group_names(),
            id=agent.pk,
            slug=agent.slug,
            name=agent.name,
            system_prompt=agent.system_prompt,
            model_id=str(agent.model_id) if agent.model_id else None,
            tools=None if agent.all_tools else frozenset(agent.tools or ()),
            step_limit=agent.step_limit,
            approvals=dict(agent.approvals or {}),
            temperature=agent.temperature,
            top_p=agent.top_p,
            max_output_tokens=agent.max_output_tokens,
            response_schema=agent.response_schema or None,
            context_strategy=dict(agent.context_strategy or {}),
        )

    def public_info(self) -> dict[str, str]:
        return {"slug": self.slug, "name": self.name}

    def allows(self, tool_name: str) -> bool:
        return self.tools is None or tool_name in self.tools

    def may_use(self, user_id: int | None, groups: frozenset[str]) -> bool:
        """Agent.may_use, as a run reads it: its owner always; a shared agent, the members of its groups (any)."""
        return (self.owner_id is not None and self.owner_id == user_id) or (
            self.owner_id is None and may_use(self.groups, groups)
        )

    def check(self, user_id: int | None, groups: frozenset[str]) -> None:
        """AgentNotAllowed when the person `user_id`, in `groups`, may not run it."""
        if not self.may_use(user_id, groups):
            raise AgentNotAllowed(self.name)


# --- reading ----------------------------------------------------------------------------------------


def agent_spec(agent_id: int | None, *, stamp: str | None = None) -> AgentSpec | None:
    """The agent `agent_id` as a run reads it (None for none, or one deleted since). `stamp`: the tool settings'
    stamp the caller read; the answer is then kept in this process while it stays the same. None: read now."""
    if agent_id is None:
        return None
    return SETTINGS_CACHE.get(stamp, "agents", agent_id, lambda: _read(agent_id))


def _read(agent_id: int) -> AgentSpec | None:
    agent = Agent.objects.filter(pk=agent_id).prefetch_related("groups").first()
    return AgentSpec.of(agent) if agent is not None else None


def own_first(agents):
    """`agents` with the person's own before the shared ones: a slug is unique among each person's own agents and
    among the shared ones, so one of each may share it, and then the person's own is the one their slug names (it
    is the one they made; the shared one of that slug is not offered to them: agents_for_picker)."""
    return agents.order_by(F("owner_id").asc(nulls_last=True))


def pick_by_slug(user, slug: str) -> Agent | None:
    """The agent `slug` names for `user`: their own of that slug, else the shared one, else None."""
    return own_first(visible_to(user).filter(slug=slug)).first()


def pick_many_by_slug(pairs: set[tuple[int, str]]) -> dict[tuple[int, str], Agent | None]:
    """pick_by_slug for many (person's id, slug) pairs in one statement (a claim of scheduled firings, for many
    people at once): for each, the person's own agent of that slug, else the shared one, else None."""
    slugs = {slug for _, slug in pairs}
    people = {user_id for user_id, _ in pairs}
    found: dict[tuple[int | None, str], Agent] = {
        (agent.owner_id, agent.slug): agent
        for agent in Agent.objects.filter(Q(owner__isnull=True) | Q(owner_id__in=people), slug__in=slugs)
    }
    return {(user_id, slug): found.get((user_id, slug)) or found.get((None, slug)) for user_id, slug in pairs}


def agents_for_picker(user, *, stamp: str | None = None) -> list[dict[str, Any]]:
    """What the empty chat shows: slug, name, description, whether it is the default and the person's own, its
    starting prompts, its model's id ("" for the default: the picker shows it once the agent is picked) and its step
    limit (None: AGENTWEB_MAX_STEPS; what Continue gives). `stamp`: the settings' stamp the page read
    (tools.services.settings_stamp): the entries are then kept in this process while it stays the same. None: read
    now."""
    entries = SETTINGS_CACHE.get(stamp, "pickers", user.pk, lambda: _read_picker(user))
    return [{**entry, "starter_prompts": list(entry["starter_prompts"])} for entry in entries]


def _read_picker(user) -> list[dict[str, Any]]:
    rows = visible_to(user).order_by("-is_default", "owner_id", "name")
    fields = ("slug", "name", "description", "is_default", "owner_id", "starter_prompts", "model_id", "step_limit")
    rows = list(rows.values_list(*fields))
    own = {row[0] for row in rows if row[4] is not None}
    return [
        {
            "slug": slug,
            "name": name,
            "description": description,
            "is_default": is_default,
            "own": owner_id is not None,
            "starter_prompts": list(starter_prompts or []),
            "model": str(model_id) if model_id is not None else "",
            "step_limit": step_limit or None,
        }
        for slug, name, description, is_default, owner_id, starter_prompts, model_id, step_limit in rows
        if owner_id is not None or slug not in own  # a shared agent whose slug the person's own took: theirs wins
    ]


def agent_for_new_thread(user, slug: str | None) -> Agent | None:
    """The agent a new thread takes: the one `slug` names (UnknownAgent when `user` may not pick it), else the
    default agent when their groups allow it, else none (today's behaviour)."""
    if slug:
        found = pick_by_slug(user, slug)
        if found is None:
            raise UnknownAgent(slug)
        return found
    return visible_to(user).filter(is_default=True, owner__isnull=True).first()


def sees_prompt(user, agent: Agent | None) -> bool:
    """Whether `user` can read the system prompt a thread of `agent` is given (None: no agent) anywhere in the app: the
    prompt of their own agent (their /agents/ page shows it), an agent's prompt when the admin lets them view agents,
    and the global AGENTWEB_SYSTEM_PROMPT (also an agent's without a prompt of its own) only as a superuser: the
    chat page shows a person no prompt. What they cannot read, nothing they make (a share link) may show."""
    if agent is not None and agent.system_prompt:
        return agent.owner_id == user.pk or user.has_perm("agents.view_agent")
    return user.is_superuser


# --- what a run does with it -----------------------------------------------------------------------


def step_limit(spec: AgentSpec | None) -> int:
    """Model calls a run of the agent's threads may make: the agent's limit, else AGENTWEB_MAX_STEPS."""
    return spec.step_limit if spec is not None and spec.step_limit else settings.AGENTWEB_MAX_STEPS


def system_prompt(spec: AgentSpec | None, *, username: str) -> str:
    """The thread's system prompt: the global one without an agent (as before agents), else the agent's (or the
    global one when it has none) with {date}, {user} and {agent} filled in. Other braces are left as they are."""
    prompt = settings.AGENTWEB_SYSTEM_PROMPT
    if spec is None:
        return prompt
    prompt = spec.system_prompt or prompt
    filled = {"{date}": timezone.localdate().isoformat(), "{user}": username, "{agent}": spec.name}
    for placeholder, value in filled.items():
        prompt = prompt.replace(placeholder, value)
    return prompt


def model_choice(thread_choice: str, spec: AgentSpec | None) -> str:
    """The model a thread's run uses: a configuration the person picked for the thread wins; else (no pick, or
    "default") the agent's model; else the default."""
    if thread_choice and thread_choice != "default":
        return thread_choice
    if spec is not None and spec.model_id:
        return spec.model_id
    return thread_choice


def with_sampling(config: ModelConfig, spec: AgentSpec | None) -> ModelConfig:
    """The agent's sampling settings over the model configuration's (each only when the agent sets it). Each
    provider sends those its API takes (providers/config.py build_provider)."""
    if spec is None:
        return config
    changes: dict[str, Any] = {}
    if spec.temperature is not None:
        changes["temperature"] = spec.temperature
    if spec.top_p is not None:
        changes["top_p"] = spec.top_p
    if spec.max_output_tokens is not None:
        changes["max_tokens"] = spec.max_output_tokens
    return dataclasses.replace(config, **changes) if changes else config


def restrict_toolset(toolset, spec: AgentSpec | None):
    """The tools of `toolset` the agent has (all of them without an agent or for an agent with all tools), and
    its approval overrides applied: "require" asks (with the tool's choices), "skip" does not."""
    if spec is None:
        return toolset
    tools = [t for t in toolset.registry.all() if spec.allows(t.name)]
    approval = {name: choices for name, choices in toolset.approval.items() if spec.allows(name)}
    for name, override in spec.approvals.items():
        if not spec.allows(name) or name not in toolset.registry:
            continue
        if override == REQUIRE:
            approval[name] = dict(toolset.choices.get(name) or _default_choices())
        else:
            approval.pop(name, None)
    return dataclasses.replace(toolset, registry=ToolRegistry(tools), approval=approval)


def _default_choices() -> dict[str, bool]:
    return dict(DEFAULT_APPROVAL)


# --- checks (admin, form, file) --------------------------------------------------------------------


def known_tool_names() -> tuple[set[str], tuple[str, ...]]:
    """The names of every tool that exists (code, HTTP tools, MCP tools listed now), and the prefixes of
    configured MCP servers whose tools are not listed (not connected): a name under one is taken on trust."""
    names = set(code_tools().names()) | set(HttpTool.objects.values_list("name", flat=True))
    prefixes: list[str] = []
    try:
        manager = mcp_connections()
        states = manager.states()
        for config in mcp_server_configs():
            listed = server_tools(config, states.get(config.name), manager)
            if listed:
                names.update(tool.name for tool in listed)
            else:
                prefixes.append(server_prefix(config.name))
    except Exception:  # a broken MCP configuration: its tools cannot be checked, the rest can
        pass
    return names, tuple(prefixes)


def tool_problems(names: list[str]) -> list[str]:
    known, prefixes = known_tool_names()
    unknown = [n for n in names if n not in known and not n.startswith(prefixes or ("\0",))]
    return [f"No tool is named {n!r}." for n in unknown]


def approval_problems(approvals: Any) -> list[str]:
    if not isinstance(approvals, dict):
        return ['An object of tool name → "require" or "skip".']
    problems = [
        f"{name!r}: {value!r} is not one of {', '.join(APPROVAL_VALUES)}."
        for name, value in approvals.items()
        if value not in APPROVAL_VALUES
    ]
    problems += tool_problems([name for name in approvals])
    return problems


def schema_problems(schema: Any) -> list[str]:
    """What is wrong with an agent's structured-answer schema, [] when it is usable."""
    from providers.structured import check_schema

    return check_schema(schema)


def starter_problems(prompts: Any) -> list[str]:
    """What is wrong with an agent's starting prompts, [] when they can be offered: a list of at most
    MAX_STARTER_PROMPTS texts, each 1 to STARTER_PROMPT_CHARS characters on one line, no two the same."""
    if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
        return ["A list of short texts."]
    problems = []
    if len(prompts) > MAX_STARTER_PROMPTS:
        problems.append(f"At most {MAX_STARTER_PROMPTS} prompts ({len(prompts)} given).")
    for number, prompt in enumerate(prompts, start=1):
        if not prompt.strip():
            problems.append(f"Prompt {number} is empty.")
        elif len(prompt) > STARTER_PROMPT_CHARS:
            problems.append(f"Prompt {number} is longer than {STARTER_PROMPT_CHARS} characters.")
        elif "\n" in prompt or "\r" in prompt:
            problems.append(f"Prompt {number} is more than one line.")
    if len(set(prompts)) < len(prompts):
        problems.append("The same prompt is given twice.")
    return problems


def strategy_problems(strategy: Any) -> list[str]:
    """What is wrong with an agent's context strategy, [] when it is usable (an empty one is today's trimming)."""
    from providers.context_strategy import ContextStrategy

    if not isinstance(strategy, dict):
        return ['A JSON object, e.g. {"kind": "last_n", "last_n": 6}, or empty.']
    try:
        ContextStrategy.from_mapping(strategy)
    except (TypeError, ValueError) as exc:
        return [str(exc)]
    return []
