"""agents/services.py: the agent a slug names for each of many people at once is the one it names for each alone."""

import pytest
from django.contrib.auth import get_user_model

from agents.models import Agent
from agents.services import pick_by_slug, pick_many_by_slug

pytestmark = pytest.mark.django_db


def test_many_peoples_slugs_name_the_agents_each_persons_own_would(owner, stranger):
    third = get_user_model().objects.create_user("third")
    shared = Agent.objects.create(name="Daily", slug="daily")
    Agent.objects.create(name="Mine", slug="daily", owner=owner)  # their own wins over the shared one of that slug
    Agent.objects.create(name="Private", slug="private", owner=stranger)  # nobody else's to pick
    pairs = {(person.pk, slug) for person in (owner, stranger, third) for slug in ("daily", "private", "none")}
    picked = pick_many_by_slug(pairs)
    people = {person.pk: person for person in (owner, stranger, third)}
    assert picked == {(user_id, slug): pick_by_slug(people[user_id], slug) for user_id, slug in pairs}
    assert picked[(owner.pk, "daily")].owner_id == owner.pk and picked[(third.pk, "daily")] == shared
    assert picked[(stranger.pk, "private")] is not None and picked[(owner.pk, "private")] is None
