"""A person's own agents, when AGENTWEB_USER_AGENTS allows it: list, make, change, delete (docs/agents.md)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from tools.services import toolset_for_user

from .forms import OwnAgentForm
from .models import Agent

app_name = "agents"


def _allowed() -> None:
    if not settings.AGENTWEB_USER_AGENTS:
        raise Http404("People do not make their own agents on this server.")


def _tools(user) -> list[str]:
    return toolset_for_user(user=user).registry.names()


@login_required
def mine(request: HttpRequest) -> HttpResponse:
    _allowed()
    form = OwnAgentForm(request.POST or None, tools=_tools(request.user))
    if request.method == "POST" and form.is_valid():
        form.save(commit=False).save_as_own(request.user)
        return redirect("agents:mine")
    agents = Agent.objects.filter(owner=request.user).order_by("name")
    return render(request, "agents/mine.html", {"form": form, "agents": agents, "editing": None})


@login_required
def edit(request: HttpRequest, slug: str) -> HttpResponse:
    _allowed()
    agent = get_object_or_404(Agent, slug=slug, owner=request.user)
    form = OwnAgentForm(request.POST or None, instance=agent, tools=_tools(request.user))
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("agents:mine")
    agents = Agent.objects.filter(owner=request.user).order_by("name")
    return render(request, "agents/mine.html", {"form": form, "agents": agents, "editing": agent})


@login_required
@require_POST
def delete(request: HttpRequest, slug: str) -> HttpResponse:
    _allowed()
    get_object_or_404(Agent, slug=slug, owner=request.user).delete()  # its threads keep going, without it
    return redirect("agents:mine")


urlpatterns = [
    path("", mine, name="mine"),
    path("<slug:slug>/edit", edit, name="edit"),
    path("<slug:slug>/delete", delete, name="delete"),
]
