"""A person's own agents made at once (two tabs, a double click): each gets a slug of its own, name-2 and on, where
the database's unique constraint (one slug per person) used to answer the later ones with an error page."""

import pytest

from tests.support.concurrency import DATABASES, at_once, migrated

SETUP = """
from django.conf import settings
from django.contrib.auth.models import User
from django.test import RequestFactory
from agents.models import Agent
from agents.views import mine

settings.AGENTWEB_USER_AGENTS = True
owner = User.objects.create_user("maker")
Agent.objects.create(slug="helper", name="Helper", description="A shared one: the person's slugs go round it.")


def attempt(n):
    request = RequestFactory().post("/agents/", {"name": "Helper", "system_prompt": f"Number {n}."})
    request.user = owner
    response = mine(request)
    assert response.status_code == 302, response.status_code


def after():
    return sorted(Agent.objects.filter(owner=owner).values_list("slug", flat=True))
"""


@pytest.mark.parametrize("database", DATABASES)
def test_six_agents_of_one_name_made_at_once_each_get_a_slug_of_their_own(database, tmp_path):
    with migrated(database, tmp_path) as env:
        outcomes, slugs = at_once(env, SETUP, count=6)

    assert outcomes == ["ok"] * 6
    assert slugs == sorted(f"helper-{n}" for n in range(2, 8))
