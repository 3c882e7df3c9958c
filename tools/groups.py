"""Who may use what: the one rule every model configuration, agent, tool and MCP server follows (docs/teams.md,
"Groups"). Plain Python: the rows give the names of the groups they allow, the caller the names of the person's
groups (tools.services.groups_of, kept per settings stamp), and every path — the picker, the Tools panel, the agent
list, both APIs, a run's start — asks here.

The rule: a thing that names no group is everyone's; one that names groups is for the members of any of them."""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["EVERYONE", "NotPermitted", "allowed_by", "may_use"]

#: What allowed_by says of a thing that names no group.
EVERYONE = "everyone"


class NotPermitted(Exception):
    """A person asked to use (or a run of theirs would use) what their groups do not allow. The message names the
    thing and says what to do; it never lists the groups that would allow it."""


def may_use(allowed: Collection[str], groups: Collection[str]) -> bool:
    """Whether a person in `groups` may use a thing that allows `allowed` (no group: everyone)."""
    return not allowed or not set(allowed).isdisjoint(groups)


def allowed_by(allowed: Collection[str], groups: Collection[str]) -> list[str]:
    """Why a person in `groups` may use it: [EVERYONE] for a thing that names no group, else the person's groups
    that it names (sorted); [] when they may not."""
    if not allowed:
        return [EVERYONE]
    return sorted(set(allowed) & set(groups))
