"""The page's agents, a person's own agents (AGENTWEB_USER_AGENTS), and the agent named by exports and share pages."""

import pytest
from django.test import Client

from agents.models import Agent
from chat.models import Thread
from sharing.export import export_json, export_markdown
from sharing.services import share_snapshot

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_empty_chat_shows_the_shared_agents_and_the_persons_own_only(owner, stranger):
    Agent.objects.create(slug="shared", name="Shared one", description="For everyone")
    Agent.objects.create(slug="mine", name="Mine", owner=owner)
    Agent.objects.create(slug="theirs", name="Theirs", owner=stranger)
    page = logged_in(owner).get("/").content.decode()
    assert 'data-slug="shared"' in page and "For everyone" in page and 'data-slug="mine"' in page
    assert "theirs" not in page


def test_own_agents_need_the_setting(owner, settings):
    settings.AGENTWEB_USER_AGENTS = False
    assert logged_in(owner).get("/agents/").status_code == 404
    settings.AGENTWEB_USER_AGENTS = True
    client = logged_in(owner)
    response = client.post(
        "/agents/",
        {"name": "Quick sums", "description": "d", "system_prompt": "Be brief", "tool_names": ["calculator"]},
    )
    assert response.status_code == 302
    agent = Agent.objects.get(owner=owner)
    assert (agent.slug, agent.all_tools, agent.tools, agent.is_default) == ("quick-sums", False, ["calculator"], False)
    # A tool the person may not use (or that does not exist) is not a choice.
    response = client.post("/agents/", {"name": "Bad", "tool_names": ["rm_rf"]})
    assert response.status_code == 200 and not Agent.objects.filter(name="Bad").exists()


def test_a_person_cannot_change_or_delete_anothers_agent(owner, stranger, settings):
    settings.AGENTWEB_USER_AGENTS = True
    Agent.objects.create(slug="theirs", name="Theirs", owner=stranger)
    client = logged_in(owner)
    assert client.get("/agents/theirs/edit").status_code == 404
    assert client.post("/agents/theirs/delete").status_code == 404
    assert Agent.objects.filter(slug="theirs").exists()


def test_exports_and_share_pages_name_the_agent(owner):
    agent = Agent.objects.create(slug="maths", name="Maths tutor", system_prompt="You are {agent}.")
    thread = Thread.objects.create(owner=owner, title="t", agent=agent)
    assert '"agent": {\n      "slug": "maths",\n      "name": "Maths tutor"\n    }' in export_json(thread)
    assert "- Agent: Maths tutor" in export_markdown(thread)
    shared = share_snapshot(thread, hide_tool_details=False, hide_system_prompt=False)
    assert shared["agent"] == {"slug": "maths", "name": "Maths tutor"}
    assert shared["system_prompt"] == "You are Maths tutor."


def make_own(client, name: str) -> Agent:
    assert client.post("/agents/", {"name": name, "description": "", "system_prompt": ""}).status_code == 302
    return Agent.objects.filter(name=name).order_by("-id").first()


def test_a_persons_own_slug_does_not_tell_that_someone_else_has_an_agent_of_that_name(owner, stranger, settings):
    settings.AGENTWEB_USER_AGENTS = True
    theirs = make_own(logged_in(stranger), "Tax helper")

    mine = make_own(logged_in(owner), "Tax helper")

    assert (theirs.slug, mine.slug) == ("tax-helper", "tax-helper")  # not tax-helper-2
    assert logged_in(owner).get("/agents/tax-helper/edit").context["editing"] == mine
    assert make_own(logged_in(owner), "Tax helper").slug == "tax-helper-2"  # their own second one


def test_a_persons_new_agent_takes_no_slug_of_a_shared_one(owner, settings):
    settings.AGENTWEB_USER_AGENTS = True
    Agent.objects.create(slug="writer", name="Writer")

    assert make_own(logged_in(owner), "Writer").slug == "writer-2"


def test_when_a_shared_agent_gets_a_persons_slug_their_own_is_the_one_they_see_and_pick(owner, stranger):
    from agents.services import agent_for_new_thread, agents_for_picker

    mine = Agent.objects.create(slug="writer", name="My writer", owner=owner, all_tools=False, tools=["calculator"])
    shared = Agent.objects.create(slug="writer", name="Shared writer")  # an admin's, made later, with every tool

    assert [(e["slug"], e["name"]) for e in agents_for_picker(owner)] == [("writer", "My writer")]
    assert agent_for_new_thread(owner, "writer") == mine
    assert agent_for_new_thread(stranger, "writer") == shared
    tools = logged_in(owner).get("/tools/available?agent=writer").json()["tools"]
    assert [tool["name"] for tool in tools] == ["calculator"]


def test_the_database_keeps_slugs_unique_among_the_shared_and_among_each_persons_own(owner, stranger):
    from django.db import IntegrityError, transaction

    Agent.objects.create(slug="x", name="Shared")
    Agent.objects.create(slug="x", name="Owner's", owner=owner)
    Agent.objects.create(slug="x", name="Stranger's", owner=stranger)
    for duplicate in ({"owner": None}, {"owner": owner}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Agent.objects.create(slug="x", name="Again", **duplicate)


def test_the_admins_form_says_which_slug_is_taken(owner):
    from django.core.exceptions import ValidationError

    Agent.objects.create(slug="x", name="Shared")
    Agent.objects.create(slug="x", name="Owner's", owner=owner)
    for duplicate, says in ((None, "A shared agent already has this slug."), (owner, "This person already has")):
        with pytest.raises(ValidationError) as refused:
            Agent(slug="x", name="Again", owner=duplicate).full_clean()
        assert says in str(refused.value)
