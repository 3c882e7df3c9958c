"""Thread endpoints over HTTP: rename, pin, archive, delete and search the user's own threads (JSON in, JSON
out), read a page of a thread's earlier messages, and read a tool call's artifact.

Every id goes through get_thread_for_user: another user's thread and a thread that does not exist get the
same 404, and nothing is written.
"""

from __future__ import annotations

import json

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404, HttpRequest, JsonResponse
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from languages.sockets import said_in
from tools.artifacts import artifact_size

from .access import NotFound, get_thread_for_user, parse_uuid
from .broadcast import tell_user
from .live import events
from .models import Message, Source, Thread, ToolCall
from .store import pages
from .store import search as message_search
from .store.deletion import delete_thread
from .store.snapshot import earlier_page
from .text import unstorable_message, unstorable_text

TITLE_MAX = 200
QUERY_MAX = 200
SEARCH_LIMIT = 50
SNIPPET_CHARS = 160
# The largest artifact sent whole, as compact UTF-8 JSON; a bigger one comes back cut, with a note.
ARTIFACT_MAX_BYTES = 1024 * 1024


def _owned(request: HttpRequest, thread_id) -> Thread:
    try:
        return get_thread_for_user(request.user, thread_id)
    except NotFound:
        raise Http404("No such thread.") from None


def _thread_json(thread: Thread) -> dict:
    return {
        "id": str(thread.pk),
        "title": thread.title,
        "updated_at": thread.updated_at.isoformat(),
        "pinned": thread.pinned_at is not None,
        "archived": thread.archived_at is not None,
        "source": thread.source,
    }


def _body(request: HttpRequest) -> dict:
    if request.content_type == "application/json":
        try:
            data = json.loads(request.body or b"{}")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}
    return request.POST.dict()


@login_required
@require_POST
def rename(request: HttpRequest, thread_id) -> JsonResponse:
    thread = _owned(request, thread_id)
    title = _body(request).get("title")
    title = " ".join(title.split()) if isinstance(title, str) else ""
    if not 1 <= len(title) <= TITLE_MAX:
        return JsonResponse({"error": _("A title has 1 to %(max)s characters.") % {"max": TITLE_MAX}}, status=400)
    if unstorable_text(title) is not None:
        return JsonResponse({"error": said_in(get_language(), unstorable_message("title"))}, status=400)
    # Renaming is not activity: the thread keeps its place in the list.
    Thread.objects.filter(pk=thread.pk).update(title=title)
    thread.title = title
    async_to_sync(tell_user)(request.user.pk, events.thread_renamed(str(thread.pk), title))
    return JsonResponse({"thread": _thread_json(thread)})


def _flag(request: HttpRequest, name: str) -> bool | None:
    value = _body(request).get(name, True)
    return value if isinstance(value, bool) else None


@login_required
@require_POST
def pin(request: HttpRequest, thread_id) -> JsonResponse:
    """`{"pinned": true|false}` (true when left out): pinned chats head the sidebar. Not activity: updated_at stays."""
    thread = _owned(request, thread_id)
    pinned = _flag(request, "pinned")
    if pinned is None:
        return JsonResponse({"error": "pinned is true or false."}, status=400)
    thread.pinned_at = timezone.now() if pinned else None
    Thread.objects.filter(pk=thread.pk).update(pinned_at=thread.pinned_at)
    async_to_sync(tell_user)(request.user.pk, events.thread_pinned(str(thread.pk), pinned))
    return JsonResponse({"thread": _thread_json(thread)})


@login_required
@require_POST
def archive(request: HttpRequest, thread_id) -> JsonResponse:
    """`{"archived": true|false}` (true when left out): an archived chat leaves the list for its "Archived" group; it
    still opens and works. Archiving unpins it. Not activity: updated_at stays."""
    thread = _owned(request, thread_id)
    archived = _flag(request, "archived")
    if archived is None:
        return JsonResponse({"error": "archived is true or false."}, status=400)
    thread.archived_at = timezone.now() if archived else None
    fields = {"archived_at": thread.archived_at}
    if archived:
        thread.pinned_at = fields["pinned_at"] = None
    Thread.objects.filter(pk=thread.pk).update(**fields)
    async_to_sync(tell_user)(request.user.pk, events.thread_archived(str(thread.pk), archived))
    return JsonResponse({"thread": _thread_json(thread)})


@login_required
@require_POST
def delete(request: HttpRequest, thread_id) -> JsonResponse:
    thread = _owned(request, thread_id)
    thread_key = str(thread.pk)
    # Everything that goes with it, by statements on the thread, in batches (chat/store/deletion.py).
    delete_thread(thread.pk)
    async_to_sync(tell_user)(request.user.pk, events.thread_deleted(thread_key))
    return JsonResponse({"deleted": thread_key})


@login_required
@require_GET
def messages_page(request: HttpRequest, thread_id) -> JsonResponse:
    """`?before=<message id>&limit=<n>`: the page of the thread's shown messages before that one, as a snapshot shows
    them, and the cursor of the page before it (docs/protocol.md, "Earlier messages"). The person's own thread only
    (anyone else's: 404); a cursor that is not a message the thread shows, or a limit out of range: 400, nothing
    read."""
    thread = _owned(request, thread_id)
    limit = request.GET.get("limit", str(pages.PAGE_MESSAGES))
    if not (limit.isascii() and limit.isdigit() and len(limit) < 5) or not 1 <= int(limit) <= pages.MAX_PAGE_MESSAGES:
        return JsonResponse({"error": f"limit: a number from 1 to {pages.MAX_PAGE_MESSAGES}."}, status=400)
    try:
        page = earlier_page(thread, before=request.GET.get("before", ""), limit=int(limit))
    except pages.BadCursor as bad:
        return JsonResponse({"error": str(bad)}, status=400)
    return JsonResponse(page)


@login_required
@require_GET
def search(request: HttpRequest) -> JsonResponse:
    """The user's own threads whose title contains `q` or with a user/assistant message (any version) holding its words
    (chat/store/search.py), newest first; each found by a message says which (`match`). With `source`
    (chat, api, schedule, trigger: Thread.source), only those started that way (the sidebar's origin filter)."""
    query = request.GET.get("q", "").strip()[:QUERY_MAX]
    source = request.GET.get("source", "")
    if source and source not in Source.values:
        return JsonResponse({"error": f"source is one of {', '.join(Source.values)}."}, status=400)
    threads = Thread.objects.filter(owner=request.user)
    if source:
        threads = threads.filter(source=source)
    matches = {}
    if query:
        # Messages through the full-text index (every version); titles, short and one person's few, as text.
        matches = message_search.search_threads(user_id=request.user.pk, query=query, limit=SEARCH_LIMIT)
        threads = threads.filter(Q(title__icontains=query) | Q(pk__in=list(matches)))
    newest = threads.order_by("-updated_at")[:SEARCH_LIMIT]
    found = [_thread_json(t) | _match_json(matches.get(str(t.pk))) for t in newest]
    body = {"q": query, "threads": found, "at": timezone.now().isoformat()}
    if source:
        body["source"] = source
    return JsonResponse(body)


def _match_json(hit: message_search.Hit | None) -> dict:
    """What matched in a thread found by its messages: which message, a snippet, and which version it is when the
    thread does not show it (an older version, or a branch left) or it has versions."""
    if hit is None:
        return {}
    text = " ".join(hit.content.split())
    match = {"message": hit.message, "role": hit.role, "snippet": text[:SNIPPET_CHARS], "shown": hit.shown}
    if hit.version is not None:
        match["version"] = {"index": hit.version.index, "count": hit.version.count}
    return {"match": match}


@login_required
@require_GET
def tool_call_artifact(request: HttpRequest, thread_id, tool_call_id) -> JsonResponse:
    """The artifact a tool call's tool stored (kept out of the model's context), for the card's viewer.

    Whole up to ARTIFACT_MAX_BYTES as JSON besides its images' data (tools/artifacts.py): {"artifact": ...}.
    Bigger: {"truncated": true, "preview": the first
    ARTIFACT_MAX_BYTES of it as indented JSON text, "size": its size in bytes, "limit": ...}."""
    thread = _owned(request, thread_id)
    try:
        call = ToolCall.objects.select_related("message").get(pk=parse_uuid(tool_call_id), message__thread=thread)
    except (ToolCall.DoesNotExist, NotFound):
        raise Http404("No such thread.") from None
    # The artifact is on the tool message that answered the call: the first after the call's step with its call
    # id (a model may use the same call id again in a later step).
    answer = (
        Message.objects.filter(
            thread=thread, role=Message.Role.TOOL, tool_call_id=call.call_id, order__gt=call.message.order
        )
        .order_by("order")
        .only("artifact")
        .first()
    )
    artifact = answer.artifact if answer is not None else None
    if artifact is None:
        return JsonResponse({"error": "This tool call stored no artifact."}, status=404)
    found = {"tool_call": str(call.pk), "name": call.name}
    measured = artifact_size(artifact)
    if measured.fits(ARTIFACT_MAX_BYTES):  # images apart: the card shows them, each up to MAX_IMAGE_BYTES
        size = measured.other + measured.images
        return JsonResponse({**found, "artifact": artifact, "truncated": False, "size": size})
    size = len(json.dumps(artifact, ensure_ascii=False, separators=(",", ":")).encode())
    text = json.dumps(artifact, ensure_ascii=False, indent=2).encode()[:ARTIFACT_MAX_BYTES]
    preview = text.decode(errors="ignore")  # a character cut in two is dropped
    return JsonResponse(
        {**found, "truncated": True, "preview": preview, "size": size, "limit": ARTIFACT_MAX_BYTES},
    )
