"""Making, listing and removing a person's triggers: shared by the pages, the admin and `manage.py triggers`."""

from __future__ import annotations

from agents.services import pick_by_slug

from . import template
from .models import Trigger, new_secret


class TriggerRefused(ValueError):
    """The trigger cannot be made as asked; the message says why."""


class NoSuchTrigger(LookupError):
    pass


def make_trigger(user, *, agent: str | None, prompt: str, name: str = "") -> tuple[Trigger, str]:
    """A new trigger of `user`, and its secret (shown this once). The agent must be one `user` may pick."""
    agent = (agent or "").strip()
    if agent and pick_by_slug(user, agent) is None:
        raise TriggerRefused(f"There is no agent {agent!r} you can use.")
    if not prompt.strip():
        raise TriggerRefused("A trigger needs a prompt.")
    try:
        template.parse(prompt)
    except template.BadTemplate as error:
        raise TriggerRefused(str(error)) from None
    secret = new_secret()
    row = Trigger.objects.create(owner=user, name=name.strip()[:100], agent_slug=agent, prompt=prompt, secret=secret)
    return row, secret


def triggers_of(user):
    return Trigger.objects.filter(owner=user)


def trigger_of(user, trigger_id: str) -> Trigger:
    """`user`'s trigger `trigger_id`; NoSuchTrigger for another person's and for none alike."""
    found = Trigger.objects.filter(owner=user, pk=str(trigger_id)[:32]).first()
    if found is None:
        raise NoSuchTrigger(trigger_id)
    return found
