"""`{% thread_items threads %}`: the sidebar's chats, one `<li>` each (templates/chat/thread.html).

Rendered here, in one pass, because the sidebar holds up to 300 chats and the page is what every person opens first:
the template took 0.17 ms a chat (an include, a `{% url %}`, `timesince`, `{% blocktranslate %}` and four date
filters each), 35 ms of a page for a person with a full sidebar (docs/performance.md, "The chat page's cost"). The
time's text is the one static/chat/sidebar.js writes over it when the page starts (thread-dates.js relativeTime), so
that it does not change under the person's eyes; the same strings, from the server's catalogue."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

register = template.Library()

#: Stands for the thread's id in the one address reversed per page.
_ID = "00000000-0000-0000-0000-000000000000"


def relative_time(when: datetime, now: datetime) -> str:
    """When a chat was last active, as the sidebar says it (static/chat/thread-dates.js relativeTime: same rules)."""
    return RelativeTimes(now)(when)


class RelativeTimes:
    """relative_time for a page's chats at one `now`. Today's date is read once, and each older day is formatted once:
    a full sidebar's 300 chats, mostly older than a week, took 12 ms of a 37 ms page in the date's localisation
    (`formats.date_format`, twice `timezone.localtime` per chat; docs/performance.md, "First paint")."""

    def __init__(self, now: datetime):
        self.now = now
        self.today = timezone.localtime(now).date()
        self.yesterday = self.today - timedelta(days=1)
        self.dates: dict = {}

    def __call__(self, when: datetime) -> str:
        seconds = max(0.0, (self.now - when).total_seconds())
        if seconds < 60:
            return gettext("just now")
        if seconds < 3600:
            return gettext("%(n)s min ago") % {"n": int(seconds // 60)}
        local = timezone.localtime(when)
        day = local.date()
        if day == self.today:
            return gettext("%(n)s h ago") % {"n": int(seconds // 3600)}
        if day == self.yesterday:
            return gettext("yesterday")
        if seconds < 7 * 86400:
            return gettext("%(n)s days ago") % {"n": max(2, int(seconds // 86400))}
        if day not in self.dates:  # DATE_FORMAT says the day only, never the time
            self.dates[day] = formats.date_format(local, "DATE_FORMAT")
        return self.dates[day]


def _source_badges() -> dict[str, str]:
    """The badge of a chat not typed in a tab (templates/chat/thread_source.html says the same), by Thread.source."""
    badge = (
        '<span class="badge thread-source" data-origin="{0}" title="{1}">'
        '<span class="visually-hidden">{2} </span>{3}</span>'
    )
    return {
        "api": badge.format("api", escape(gettext("Started from the API")), escape(gettext("started from the")), "API"),
        "schedule": badge.format(
            "schedule",
            escape(gettext("Started by a schedule")),
            escape(gettext("started by a schedule:")),
            escape(gettext("Scheduled")),
        ),
        "trigger": badge.format(
            "trigger",
            escape(gettext("Started by a webhook trigger")),
            escape(gettext("started by a webhook:")),
            escape(gettext("Triggered")),
        ),
    }


def _iso(value: datetime) -> str:
    return timezone.localtime(value).isoformat()


@register.simple_tag(takes_context=True)
def thread_items(context, threads) -> SafeString:
    """Each of `threads` (chat/store/turns.py SidebarThread) as the sidebar's `<li>`; the page's own thread marked."""
    current = context.get("thread")
    current_id = current.id if current is not None else None
    address = reverse("chat:thread", args=[_ID])
    untitled = escape(gettext("Untitled"))
    badges = _source_badges()
    said_when = RelativeTimes(timezone.now())
    rows = []
    for t in threads:
        source = t.source if t.source and t.source != "chat" else ""
        agent = t.agent_slug or ""
        opening = f'<li class="thread-item" data-thread-id="{t.id}" data-agent="{escape(agent)}"'
        opening += ' data-pinned="true"' if t.pinned_at else ' data-pinned="false"'
        if t.pinned_at:
            opening += f' data-pinned-at="{_iso(t.pinned_at)}"'
        if t.archived_at:
            opening += ' data-archived="true"'
        if source:
            opening += f' data-source="{escape(source)}"'
        link = f'<a class="thread-link" href="{address.replace(_ID, str(t.id))}"'
        if current_id is not None and t.id == current_id:
            link += ' aria-current="page"'
        title = escape(t.title) if t.title else untitled
        time = ""
        if t.updated_at:
            said = escape(said_when(t.updated_at))
            time = f'<time class="thread-time" datetime="{_iso(t.updated_at)}">{said}</time>'
        rows.append(
            f'{opening}>\n  {link}>\n    <span class="thread-title">{title}</span>\n    {time}\n'
            f"    {badges.get(source, '')}\n  </a>\n</li>\n"
        )
    return mark_safe("".join(rows))  # every value above is escaped or made here
