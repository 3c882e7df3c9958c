"""Share links (owner pages and the public shared page) and export. Every id goes through an access helper;
another user's id, a revoked link and a made-up one all get the same 404, and nothing is written."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from audit.recording import client_ip
from chat.access import NotFound, get_thread_for_user

from . import export, services
from .access import get_link_for_token, get_link_for_user
from .forms import ShareForm

# The shared page runs no script and loads nothing but its own stylesheet and icon, whatever the content says.
SHARED_PAGE_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def _owned_thread(request: HttpRequest, thread_id):
    try:
        return get_thread_for_user(request.user, thread_id)
    except NotFound:
        raise Http404("No such thread.") from None


@login_required
@require_GET
def share_options(request: HttpRequest, thread_id) -> JsonResponse:
    """What the share form may offer for the thread: "Hide the system prompt" only when its author can read the
    prompt (sharing.services.author_sees_prompt); static/chat/share.js asks as the menu opens."""
    thread = _owned_thread(request, thread_id)
    return JsonResponse({"shares_system_prompt": services.author_sees_prompt(thread)})


def _owned_link(request: HttpRequest, link_id):
    try:
        return get_link_for_user(request.user, link_id)
    except NotFound:
        raise Http404("No such link.") from None


def _wants_json(request: HttpRequest) -> bool:
    return request.headers.get("Accept", "").startswith("application/json")


@login_required
@require_POST
def create(request: HttpRequest, thread_id) -> HttpResponse:
    thread = _owned_thread(request, thread_id)
    form = ShareForm(request.POST)
    if not form.is_valid():
        if _wants_json(request):
            return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
        return render(request, "sharing/created.html", {"form": form, "thread": thread}, status=400)
    created = services.create_link(thread=thread, by=request.user, ip=client_ip(request), **form.cleaned_data)
    url = request.build_absolute_uri(reverse("sharing:shared", args=[created.token]))
    if _wants_json(request):
        response = JsonResponse({"url": url, "list_url": reverse("sharing:list")}, status=201)
    else:
        response = render(request, "sharing/created.html", {"url": url, "thread": thread}, status=201)
    add_never_cache_headers(response)  # the token is in it
    return response


@login_required
@require_GET
def link_list(request: HttpRequest) -> HttpResponse:
    return render(request, "sharing/list.html", {"links": services.list_links(user=request.user)})


@login_required
@require_http_methods(["GET", "POST"])
def revoke(request: HttpRequest, link_id) -> HttpResponse:
    """GET asks (a page of its own: it works without JavaScript), POST revokes; revoking cannot be undone."""
    link = _owned_link(request, link_id)
    if request.method == "GET":
        if not link.is_active:
            raise Http404("No such link.")
        return render(request, "sharing/revoke.html", {"link": link})
    services.revoke_link(link, by=request.user, ip=client_ip(request))
    messages.success(
        request,
        _("Link to “%(title)s” revoked: it no longer opens.") % {"title": link.snapshot.get("title") or _("Untitled")},
    )
    return redirect("sharing:list")


@login_required
@require_POST
def update(request: HttpRequest, link_id) -> HttpResponse:
    link = _owned_link(request, link_id)
    if not link.is_active:
        raise Http404("No such link.")
    services.update_snapshot(link)
    messages.success(
        request,
        _("Link to “%(title)s” now shows the thread as it is.")
        % {"title": link.snapshot.get("title") or _("Untitled")},
    )
    return redirect("sharing:list")


@require_GET
def shared(request: HttpRequest, token: str) -> HttpResponse:
    try:
        link = get_link_for_token(token)
    except NotFound:
        raise Http404("No such shared conversation.") from None
    shown = {"link": link, "snapshot": link.snapshot, "system_prompt": services.shown_system_prompt(link)}
    response = render(request, "sharing/shared.html", shown)
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Content-Security-Policy"] = SHARED_PAGE_CSP
    response["Referrer-Policy"] = "no-referrer"  # the token is in the address
    add_never_cache_headers(response)  # a revoked link must not live on in a cache
    return response


@require_GET
def shared_attachment(request: HttpRequest, token: str, attachment_id) -> HttpResponse:
    """A file of a shared conversation: only through a live link that shares attachments, only a file its snapshot
    shows, only of the link's thread (the same 404 otherwise)."""
    from attachments.models import Attachment
    from attachments.views import file_response

    try:
        link = get_link_for_token(token)
    except NotFound:
        raise Http404("No such file.") from None
    shown = {
        item.get("id")
        for message in link.snapshot.get("messages", [])
        for item in message.get("attachments") or []
        if link.share_attachments
    }
    row = Attachment.objects.filter(pk=attachment_id, thread_id=link.thread_id).first()
    if row is None or str(row.pk) not in shown:
        raise Http404("No such file.")
    response = file_response(row)
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Referrer-Policy"] = "no-referrer"
    return response


@login_required
@require_GET
def export_markdown(request: HttpRequest, thread_id) -> HttpResponse:
    thread = _owned_thread(request, thread_id)
    return _download(export.export_markdown(thread), "text/markdown", export.export_filename(thread, "md"))


@login_required
@require_GET
def export_json(request: HttpRequest, thread_id) -> HttpResponse:
    thread = _owned_thread(request, thread_id)
    # Streamed: a long thread's export is written as it is read, in batches (sharing/export.py).
    response = StreamingHttpResponse(export.export_json_chunks(thread), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=export.export_filename(thread, "json")
    )
    response["Cache-Control"] = "private, no-store"
    return response


def _download(body: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    response["Cache-Control"] = "private, no-store"
    return response
