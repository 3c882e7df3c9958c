"""The tools a person may use now, as JSON for the chat page's Tools panel: GET /tools/available.

What it lists is what a run of this user would get (tools.services.toolset_for_user): enabled code tools and
HTTP tools their groups allow, with the admin's description and approval settings; `?agent=<slug>` cuts it down to
the tools of that agent (one the person may pick), as a run of the agent's threads gets them. Descriptions are the
admin's or a tool author's text: the page shows them as text, never as HTML.

Here, at the edge, rather than in tools/: an agent's cut of the tools is the agents app's (agents/services.py), and
that app stands on tools/.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from agents.services import AgentSpec, pick_by_slug, restrict_toolset
from tools.services import ToolSet, toolset_for_user


def approval_of(toolset: ToolSet, name: str) -> str:
    """Which calls of the tool wait for a person: "always", "never", or "depends" when the admin's rules on
    argument values decide per call (tools.approval_rules)."""
    requires = name in toolset.approval
    actions = {rule.action for rule in toolset.rules.get(name, ())}
    if not actions or actions == ({"ask"} if requires else {"allow"}):
        return "always" if requires else "never"
    return "depends"


@login_required
@require_GET
def available(request: HttpRequest) -> JsonResponse:
    toolset = toolset_for_user(user=request.user)
    slug = request.GET.get("agent", "")
    if slug:
        agent = pick_by_slug(request.user, slug[:100])
        if agent is None:
            raise Http404("No such agent.")
        toolset = restrict_toolset(toolset, AgentSpec.of(agent))
    tools = [
        {"name": tool.name, "description": tool.description, "approval": approval_of(toolset, tool.name)}
        for tool in toolset.registry.all()
    ]
    return JsonResponse({"tools": tools})
