"""Share links: create, re-take the snapshot, revoke, list. Synchronous, keyword-only, typed; views call these
after the access helpers (chat.access, sharing.access) have checked who may touch what."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

import audit
from agents.services import sees_prompt, system_prompt
from chat.models import Thread
from chat.store import build_snapshot, thread_agent

from .models import ShareLink, default_display_name, hash_token, new_token

SNAPSHOT_VERSION = 1


@dataclass(frozen=True)
class CreatedLink:
    link: ShareLink
    # The only time the plain token exists: it goes into the URL shown to the owner, then is forgotten.
    token: str


def share_snapshot(
    thread: Thread, *, hide_tool_details: bool, hide_system_prompt: bool, share_attachments: bool = False
) -> dict[str, Any]:
    """The conversation as the shared page shows it, taken from the same data as the live view. What the
    options hide is left out here, not only at rendering: it is never stored with the link."""
    live = build_snapshot(thread=thread, seq=thread.last_seq, model={})
    messages = [
        {
            "role": message["role"],
            "content": message["content"],
            "status": message["status"],
            "tool_calls": [_tool_call(call, hide_details=hide_tool_details) for call in message.get("tool_calls", [])],
            # Only when the link shares them: the files' names, sizes and ids (which the link then serves).
            "attachments": [
                {key: item.get(key) for key in ("id", "name", "kind", "content_type", "size")}
                for item in message.get("attachments", [])
            ]
            if share_attachments
            else [],
        }
        for message in live["messages"]
    ]
    return {
        "version": SNAPSHOT_VERSION,
        "title": live["title"],
        # The thread's agent ({slug, name}) or None, and its prompt as the model was given it (docs/agents.md).
        "agent": live.get("agent"),
        "system_prompt": None
        if hide_system_prompt
        else system_prompt(thread_agent(thread), username=thread.owner.get_username()),
        "messages": messages,
    }


def author_sees_prompt(thread: Thread) -> bool:
    """Whether the thread's owner, who shares it, can read its system prompt (agents.services.sees_prompt): a share
    shows no more than its author could see, whatever the form said."""
    return sees_prompt(thread.owner, thread.agent)


def _tool_call(call: dict[str, Any], *, hide_details: bool) -> dict[str, Any]:
    shown = {"name": call["name"], "status": call["status"]}
    if not hide_details:
        shown.update(args=call["args"], content=call["content"], duration_ms=call["duration_ms"])
    return shown


def create_link(
    *,
    thread: Thread,
    display_name: str = "",
    hide_tool_details: bool = False,
    hide_system_prompt: bool = True,
    share_attachments: bool = False,
    by=None,
    ip: str | None = None,
) -> CreatedLink:
    """A new link to a snapshot of `thread` as it is now. `thread` is one the caller checked is the user's. The system
    prompt is hidden, whatever was asked, when its author could not read it (author_sees_prompt). The link is
    recorded in the audit log, made by `by` (the thread's owner when None), in the transaction that makes it."""
    name = display_name.strip() or default_display_name(thread.owner)
    hide_system_prompt = hide_system_prompt or not author_sees_prompt(thread)
    snapshot = share_snapshot(
        thread,
        hide_tool_details=hide_tool_details,
        hide_system_prompt=hide_system_prompt,
        share_attachments=share_attachments,
    )
    for _ in range(3):  # a collision of 256-bit tokens does not happen; a unique index makes sure
        token = new_token()
        try:
            with transaction.atomic():
                link = ShareLink.objects.create(
                    thread=thread,
                    token_hash=hash_token(token),
                    snapshot=snapshot,
                    hide_tool_details=hide_tool_details,
                    hide_system_prompt=hide_system_prompt,
                    share_attachments=share_attachments,
                    display_name=name,
                )
                audit.record(
                    audit.Action.SHARE_LINK_CREATED,
                    actor=by or thread.owner,
                    target=link,
                    ip=ip,
                    detail={
                        "thread": str(thread.pk),
                        "hide_tool_details": hide_tool_details,
                        "hide_system_prompt": hide_system_prompt,
                        "share_attachments": share_attachments,
                    },
                )
        except IntegrityError:
            continue
        return CreatedLink(link=link, token=token)
    raise RuntimeError("could not make a unique share token")


def revoke_link(link: ShareLink, *, by, ip: str | None = None, via: str = "page") -> bool:
    """Revoke `link` (its page 404s from now on) and record who did; False when it was revoked already."""
    with transaction.atomic():
        if not link.revoke():
            return False
        audit.record(
            audit.Action.SHARE_LINK_REVOKED,
            actor=by,
            target=link,
            ip=ip,
            detail={"thread": str(link.thread_id), "via": via},
        )
    return True


def update_snapshot(link: ShareLink) -> ShareLink:
    """Re-take the snapshot with the link's options; the token, and so the URL, stay the same. A prompt its author can
    no longer read is hidden from now on."""
    link.hide_system_prompt = link.hide_system_prompt or not author_sees_prompt(link.thread)
    link.snapshot = share_snapshot(
        link.thread,
        hide_tool_details=link.hide_tool_details,
        hide_system_prompt=link.hide_system_prompt,
        share_attachments=link.share_attachments,
    )
    link.updated_at = timezone.now()
    link.save(update_fields=["snapshot", "updated_at", "hide_system_prompt"])
    return link


def shown_system_prompt(link: ShareLink) -> str | None:
    """The system prompt the shared page shows: the snapshot's, only while the link shows it and its author can read
    it now (a link made before this check, or an author who has since lost the right, shows none)."""
    prompt = link.snapshot.get("system_prompt")
    if not prompt or link.hide_system_prompt or not author_sees_prompt(link.thread):
        return None
    return prompt


def list_links(*, user) -> list[ShareLink]:
    """All the user's links, newest first, active and revoked; `shows_prompt` on each says whether its page shows a
    system prompt now (shown_system_prompt), which an older link's options may not."""
    links = list(ShareLink.objects.filter(thread__owner=user).select_related("thread__agent").order_by("-created_at"))
    for link in links:
        link.thread.owner = user  # they are the user's: sees_prompt then asks the user's permissions once
        link.shows_prompt = shown_system_prompt(link) is not None
    return links
