"""What a notification says: made from the events of one window, from names and ids only (the agent, the tool,
the thread's title, how many), never from a call's arguments, a result or a secret. Its link is an ordinary app
address (/inbox, /t/<id>/) that needs a signed-in session; it carries no token."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chat.notify import APPROVAL, FAILED, FINISHED, INPUT

#: The events a notification lists one by one (a burst is counted, not listed).
MAX_LISTED = 10

# Marked here, said in the person's language where a notification is composed (notifications/dispatch.py). The
# counted ones are for two or more, the same form in each language offered (docs/ui.md, Languages).
_ONE = {
    APPROVAL: gettext_noop("{tool} waits for your approval"),
    INPUT: gettext_noop("{tool} asks for your input"),
    FAILED: gettext_noop("A run failed"),
    FINISHED: gettext_noop("A scheduled or triggered run finished"),
}
_MANY = {
    APPROVAL: gettext_noop("{n} tool calls wait for your approval"),
    INPUT: gettext_noop("{n} tools ask for your input"),
    FAILED: gettext_noop("{n} runs failed"),
    FINISHED: gettext_noop("{n} scheduled or triggered runs finished"),
}


@dataclass(frozen=True)
class Notification:
    subject: str
    body: str
    path: str  # the app's address to open, from the site's root
    count: int
    items: list[dict[str, Any]]

    def payload(self, base_url: str) -> dict[str, Any]:
        """What Web Push and the webhook carry (docs/background.md)."""
        return {
            "title": self.subject,
            "body": self.body,
            "url": base_url + self.path,
            "path": self.path,
            "count": self.count,
            "events": self.items,
        }


def compose(events: list, base_url: str) -> Notification:
    """One notification for `events` (notifications.models.Event rows of one person, oldest first)."""
    kinds = Counter(e.kind for e in events)
    count = len(events)
    if len(kinds) == 1:
        kind = next(iter(kinds))
        subject = _(_ONE[kind]).format(tool=_tool(events[0])) if count == 1 else _(_MANY[kind]).format(n=count)
    else:
        parts = []
        for kind, n in kinds.items():
            first = next(e for e in events if e.kind == kind)
            parts.append(_(_MANY[kind]).format(n=n) if n > 1 else _(_ONE[kind]).format(tool=_tool(first)))
        subject = "; ".join(parts)
    threads = {e.thread_id for e in events}
    if kinds.keys() & {APPROVAL, INPUT}:
        path = "/inbox"
    elif len(threads) == 1:
        path = f"/t/{events[0].thread_id}/"
    else:
        path = "/"
    lines = [_line(e) for e in events[:MAX_LISTED]]
    if count > MAX_LISTED:
        lines.append(_("… and %(n)s more.") % {"n": count - MAX_LISTED})
    body = "\n".join(lines)
    items = [_item(e) for e in events[:MAX_LISTED]]
    opening = _("Open: %(url)s") % {"url": base_url + path}
    sign_in = _("(You will be asked to sign in if you are not.)")
    text = f"{subject}.\n\n{body}\n\n{opening}\n{sign_in}\n"
    return Notification(subject=subject, body=text, path=path, count=count, items=items)


def _tool(event) -> str:
    return event.tool or _("A tool")


def _line(event) -> str:
    agent = f"{event.agent}: " if event.agent else ""
    title = event.thread_title or _("Untitled")
    if event.kind == APPROVAL:
        what = _("%(tool)s waits for approval in “%(title)s”")
    elif event.kind == INPUT:
        what = _("%(tool)s asks for input in “%(title)s”")
    elif event.kind == FAILED:
        what = _("the run failed in “%(title)s”")
    else:
        what = _("the run finished in “%(title)s”")
    return f"- {agent}{what % {'tool': event.tool, 'title': title}}"


def _item(event) -> dict[str, Any]:
    return {
        "kind": event.kind,
        "agent": event.agent,
        "tool": event.tool,
        "thread": {"id": str(event.thread_id), "title": event.thread_title},
        "link": f"/t/{event.thread_id}/",
    }
