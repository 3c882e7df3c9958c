"""/inbox: the page, its items as JSON (read again when the socket says the inbox changed), and the count."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from . import queries


@require_GET
@login_required
def inbox_page(request):
    return render(request, "inbox/inbox.html", {"inbox_items": queries.items(request.user)})


@require_GET
@login_required
def inbox_items(request):
    found = queries.items(request.user)
    return JsonResponse({"items": found, "count": queries.count(request.user)}, headers=_private())


@require_GET
@login_required
def inbox_count(request):
    return JsonResponse({"count": queries.count(request.user)}, headers=_private())


def _private() -> dict[str, str]:
    return {"Cache-Control": "no-store"}
