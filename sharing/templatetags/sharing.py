"""Filters for the shared page and the chat page's first screen. Each returns plain text, so autoescaping still applies
to what it returns, except `markdown`, whose HTML comes from sharing.markdown (raw HTML shown as text, only safe
links, no images). And `live_links`, the person's links the settings page lists: the chat app's pages show what
this app holds through this library, without importing it (sharing imports chat)."""

import json

from django import template
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _

from sharing.markdown import render_markdown
from sharing.services import list_links

register = template.Library()

TOOL_STATUS_LABELS = {
    "streaming": _("preparing"),
    "requested": _("queued"),
    "awaiting_approval": _("needs approval"),
    "running": _("running"),
    "success": _("success"),
    "error": _("error"),
    "rejected": _("rejected"),
    "replied": _("replied"),
    "cancelled": _("cancelled"),
}


@register.filter
def pretty_json(value) -> str:
    """Arguments or a result as readable text: strings as they are, anything else as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


@register.filter(is_safe=True)
def markdown(value) -> SafeString:
    """An assistant message as the app shows it: Markdown rendered with the rules of static/chat/markdown.js."""
    # Safe by construction: escaped text inside the fixed markup sharing.markdown writes.
    return mark_safe(render_markdown(str(value or "")))


@register.filter
def tool_status(value) -> str:
    return str(TOOL_STATUS_LABELS.get(str(value), str(value)))


@register.filter
def duration(ms) -> str:
    """12 ms, 1.4 s, 2 min 5 s: as the chat page shows it."""
    if not isinstance(ms, int | float) or ms < 0:
        return ""
    if ms < 1000:
        return f"{round(ms)} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s" if ms < 10_000 else f"{round(ms / 1000)} s"
    return f"{int(ms // 60_000)} min {round((ms % 60_000) / 1000)} s"


@register.filter
def turns(messages) -> list[dict]:
    """Messages as the chat page groups them (static/chat/answer.js): each user message on its own
    (`{"role": "user", "message": m}`), and the assistant messages between two user messages, one per model call,
    as one answer (`{"role": "assistant", "segments": [m, …]}`)."""
    grouped: list[dict] = []
    for message in messages or []:
        if message["role"] != "assistant":
            grouped.append({"role": message["role"], "message": message})
        elif grouped and grouped[-1]["role"] == "assistant":
            grouped[-1]["segments"].append(message)
        else:
            grouped.append({"role": "assistant", "segments": [message]})
    return grouped


@register.simple_tag
def live_links(user) -> list:
    """`user`'s shared links that are not revoked, newest first: `{% live_links request.user as links %}`."""
    return [link for link in list_links(user=user) if link.revoked_at is None]
