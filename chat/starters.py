"""The empty chat's starting prompts (docs/ui.md, "Starting prompts"): a few buttons that send a first message.

An agent's own prompts (Agent.starter_prompts) when the picked agent has some; else suggestions that fit the model
and the tools the chat would have: for the offline demo model, what its script understands (arithmetic, the time);
for a real model, a question for each of the built-in tools it may call, then general ones. The page picks among
them as the person picks an agent and a model (static/chat/starters.js)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, gettext_noop

from agents.services import AgentSpec, own_first, restrict_toolset, visible_to
from tools.services import toolset_for_page
from tools.settings_cache import SETTINGS_CACHE

SHOWN = 4

# (the tools a prompt needs, the prompt). In order: the first SHOWN whose tools the chat has are offered. Said in
# the page's language (an agent's own prompts are its author's words, as they are).
DEMO_SUGGESTIONS: tuple[tuple[frozenset[str], str], ...] = (
    # Translators: the demo model's script reads the arithmetic and "Europe/Paris"/"UTC": keep them as they are.
    (frozenset({"calculator"}), gettext_noop("What is 23*19?")),
    (frozenset({"current_time"}), gettext_noop("What time is it in Europe/Paris?")),
    (frozenset({"calculator", "current_time"}), gettext_noop("What is (17+4)*3, and what time is it in UTC?")),
    (frozenset(), gettext_noop("Hello! What can you do?")),
)
MODEL_SUGGESTIONS: tuple[tuple[frozenset[str], str], ...] = (
    # xgettext:no-python-format
    (frozenset({"calculator"}), gettext_noop("What is 17.5% of 2,340?")),
    (frozenset({"current_time"}), gettext_noop("What time is it in Tokyo right now?")),
    (frozenset(), gettext_noop("What can you help me with? Answer in three short bullet points.")),
    (frozenset(), gettext_noop("Help me write a short, polite email declining a meeting.")),
    (frozenset(), gettext_noop("Give me three ideas for a weekend coding project.")),
)


def suggestions(tools: set[str] | frozenset[str], *, demo: bool) -> list[str]:
    """The page's own starting prompts for a chat with `tools`, for the demo model or a real one, in the active
    language (the page's)."""
    table = DEMO_SUGGESTIONS if demo else MODEL_SUGGESTIONS
    return [gettext(prompt) for needs, prompt in table if needs <= tools][:SHOWN]


def empty_chat_starters(
    user, agents: list[dict[str, Any]], *, stamp: str | None = None
) -> dict[str, dict[str, list[str]]]:
    """What the empty chat offers, by agent slug ("" for no agent): `agent`, the agent's own prompts, when it has
    some; else `demo` and `model`, the suggestions for its tools with the demo model and with a real one.
    `agents`: the picker's entries (agents.services.agents_for_picker), which carry their prompts. `stamp`: the
    settings stamp the page read (tools.services.settings_stamp), if it did."""
    toolset = toolset_for_page(user, stamp=stamp)
    mine = set(toolset.registry.names())
    found: dict[str, dict[str, list[str]]] = {
        "": {"demo": suggestions(mine, demo=True), "model": suggestions(mine, demo=False)}
    }
    if not agents:
        return found
    # Only the agents without prompts of their own need their tools worked out (an agent's row each), and only the
    # tools a suggestion needs: kept per settings stamp and person, since the agents, the admin's switches and the
    # person's groups all change the stamp (the empty chat was two statements more for each such agent).
    tooled = tuple(sorted(entry["slug"] for entry in agents if not entry.get("starter_prompts")))
    needed = SETTINGS_CACHE.get(stamp, "starters", (user.pk, tooled), lambda: _needed_tools(user, toolset, tooled))
    for entry in agents:
        if entry.get("starter_prompts"):
            found[entry["slug"]] = {"agent": list(entry["starter_prompts"])[:SHOWN]}
            continue
        tools = needed.get(entry["slug"], mine)
        found[entry["slug"]] = {"demo": suggestions(tools, demo=True), "model": suggestions(tools, demo=False)}
    return found


#: The tools some suggestion needs: all that decides which are offered.
NEEDED = frozenset().union(*(needs for needs, _ in DEMO_SUGGESTIONS + MODEL_SUGGESTIONS))


def _needed_tools(user, toolset, slugs: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Of each agent's tools (`slugs`, those without prompts of their own), those a suggestion needs."""
    specs: dict[str, AgentSpec] = {}
    for agent in own_first(visible_to(user).filter(slug__in=slugs)) if slugs else ():
        specs.setdefault(agent.slug, AgentSpec.of(agent))  # the person's own first: theirs is what a slug names
    return {slug: frozenset(restrict_toolset(toolset, spec).registry.names()) & NEEDED for slug, spec in specs.items()}
