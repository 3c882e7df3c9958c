"""The tools a person turned off for one chat (Thread.disabled_tools; docs/ui.md, "The Tools panel"): checking the
names a page sends, and changing the set. A run never offers those tools and never runs a call of one
(chat/runs/execute.py)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils.translation import ngettext_lazy

from languages.phrases import Phrase
from tools.services import toolset_for_user

from ..access import get_thread_for_user
from ..models import Run, Thread
from .turns import RunActive


class UnknownTools(Exception):
    """Names that are not tools of the person's: refused, nothing changed."""

    def __init__(self, names: list[str]):
        self.names = names
        listed = ", ".join(repr(name[:100]) for name in names[:5])
        super().__init__(
            Phrase(
                ngettext_lazy(
                    "tool: %(listed)s is not a tool you can use here.",
                    "tool: %(listed)s are not tools you can use here.",
                    "n",
                ),
                plural_by="n",
                listed=listed,
                n=len(names),
            )
        )


def checked_tool_names(*, user, names: Iterable[str]) -> list[str]:
    """`names`, sorted and without repeats, once each is found to be one of `user`'s tools: one they may use now or
    one the admin switched off (turning it off here too is harmless, and a page may still list it). UnknownTools
    otherwise."""
    wanted = sorted(set(names))
    if not wanted:
        return []
    toolset = toolset_for_user(user=user)
    unknown = [name for name in wanted if name not in toolset.registry and name not in toolset.disabled]
    if unknown:
        raise UnknownTools(unknown)
    return wanted


def set_tool_enabled(*, user, thread_id: object, tool: str, enabled: bool) -> list[str]:
    """Turn `tool` on or off for the person's thread; returns the thread's tools turned off now. NotFound for a thread
    that is not theirs; RunActive while a run of it is running or waiting (a run reads the set as it starts, so a
    change would apply to part of it only); UnknownTools when turning off a name that is not one of their tools.
    Turning on is never refused: a name not in the set changes nothing."""
    with transaction.atomic():
        thread = get_thread_for_user(user, thread_id)
        if Run.objects.filter(thread=thread, status__in=Run.ACTIVE_STATUSES).exists():
            raise RunActive
        turned_off = set(thread.disabled_tools or ())
        if enabled:
            turned_off.discard(tool)
        else:
            turned_off.update(checked_tool_names(user=user, names=[tool]))
        turned_off_now = sorted(turned_off)
        Thread.objects.filter(pk=thread.pk).update(disabled_tools=turned_off_now)
    return turned_off_now
