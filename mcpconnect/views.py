"""The page where a person connects their accounts to the MCP servers each person connects to, the OAuth callback,
and disconnecting (docs/mcp.md, "Each person connects"). Thin: mcpconnect/flows.py does the work."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from .flows import ConnectFailed, connect_with_key, disconnect, finish_oauth, personal_servers, server_for, start_oauth
from .models import McpConnection, PendingAuthorization


def _back(request: HttpRequest, server: str = "") -> HttpResponse:
    url = reverse("mcpconnect:connections")
    return redirect(f"{url}?server={server}" if server else url)


@login_required
@require_GET
def connections(request: HttpRequest) -> HttpResponse:
    mine = {row.server: row for row in McpConnection.objects.filter(user=request.user)}
    rows = []
    for config in personal_servers(request.user):
        row = mine.get(config.name)
        connected = row is not None and row.connected and row.mode == config.per_person
        rows.append({"config": config, "connected": connected, "since": row.connected_at if connected else None})
    return render(
        request,
        "mcpconnect/connections.html",
        {"servers": rows, "wanted": request.GET.get("server", "")[:40]},
    )


@login_required
@require_POST
def connect(request: HttpRequest, server: str) -> HttpResponse:
    config = server_for(server, request.user)
    if config is None:
        messages.error(request, f"There is no MCP server {server[:40]!r} to connect to.")
        return _back(request)
    try:
        if config.per_person == "header":
            connect_with_key(request.user, config, request.POST.get("value", ""))
            messages.success(request, f"Connected to {config.name}.")
            return _back(request, config.name)
        address = start_oauth(request.user, config, next="close" if request.POST.get("next") == "close" else "")
    except ConnectFailed as failed:
        messages.error(request, str(failed))
        return _back(request, config.name)
    return HttpResponseRedirect(address)


@login_required
@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    try:
        ended = finish_oauth(
            request.user,
            state=request.GET.get("state", ""),
            code=request.GET.get("code", ""),
            iss=request.GET.get("iss", ""),
            error=request.GET.get("error_description", "") or request.GET.get("error", ""),
        )
    except ConnectFailed as failed:
        messages.error(request, str(failed))
        return _back(request)
    if ended.status == PendingAuthorization.Status.DONE:
        messages.success(request, f"Connected to {ended.server}. A chat waiting for it goes on by itself.")
    else:
        messages.error(request, f"Connecting to {ended.server} failed: {ended.error}")
    return _back(request, ended.server)


@login_required
@require_POST
def disconnect_view(request: HttpRequest, server: str) -> HttpResponse:
    if disconnect(request.user, server[:40]):
        messages.success(request, f"Disconnected from {server[:40]}: its key or tokens are deleted.")
    return _back(request)
