"""The person's API keys on their settings page (templates/chat/settings.html lists them through the `api_keys` tag
library): making one, shown once, and revoking one. Another person's key id and a made-up one get the same 404."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from audit.recording import client_ip

from . import keys
from .forms import KeyForm
from .keys import NoSuchKey, key_of


def _settings_section() -> str:
    return reverse("chat:settings") + "#api-keys"


@login_required
@require_POST
def create(request: HttpRequest) -> HttpResponse:
    """The key is in this response only: rendered, never redirected to (an address is kept in history and logs),
    never put in a message (the messages' cookie would keep it), not cached."""
    form = KeyForm(request.POST, user=request.user)
    if not form.is_valid():
        return render(request, "api/key_created.html", {"form": form}, status=400)
    row, key = form.issue(ip=client_ip(request))
    response = render(request, "api/key_created.html", {"row": row, "key": key}, status=201)
    add_never_cache_headers(response)
    response["Referrer-Policy"] = "no-referrer"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def revoke(request: HttpRequest, key_id: int) -> HttpResponse:
    """GET asks (a page of its own: it works without JavaScript), POST revokes; revoking cannot be undone."""
    try:
        row = key_of(request.user, key_id)
    except NoSuchKey:
        raise Http404("No such key.") from None
    if request.method == "GET":
        if row.revoked_at is not None:
            return redirect(_settings_section())
        return render(request, "api/key_revoke.html", {"row": row})
    keys.revoke([row], by=request.user, ip=client_ip(request), via="settings")
    messages.success(
        request,
        _("The key “%(name)s” (%(shown)s) is revoked: it no longer works.") % {"name": row.name, "shown": row.shown},
    )
    return redirect(_settings_section())
