"""The triggers page: a person sees and removes only their own triggers, a made trigger's secret is on its answer
only (never on the list, never cached), a bad template or an agent not theirs is refused; the admin never shows a
secret."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from hooks.models import Trigger
from hooks.services import make_trigger

pytestmark = pytest.mark.django_db


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_secret_is_shown_once_and_the_list_holds_only_the_persons_triggers(owner, stranger):
    theirs, _ = make_trigger(stranger, agent="", prompt="Theirs {x}", name="Stranger's")
    client = login(owner)
    made = client.post("/hooks/", {"name": "CI", "agent": "", "prompt": "Build {build.id} failed"})
    assert made.status_code == 201
    row = Trigger.objects.get(owner=owner)
    secret = row.secret
    assert secret in made.content.decode()
    assert f"/hooks/{row.pk}" in made.content.decode()
    assert "no-store" in made["Cache-Control"] or "no-cache" in made["Cache-Control"]
    listed = client.get("/hooks/").content.decode()
    assert "CI" in listed and secret not in listed
    assert theirs.pk not in listed and "Stranger" not in listed


def test_another_persons_trigger_and_a_made_up_one_get_the_same_404(owner, stranger):
    theirs, _ = make_trigger(stranger, agent="", prompt="Theirs {x}")
    client = login(owner)
    assert client.post(f"/hooks/{theirs.pk}/remove/").status_code == 404
    assert client.post("/hooks/made-up/remove/").status_code == 404
    assert Trigger.objects.filter(pk=theirs.pk).exists()
    mine, _ = make_trigger(owner, agent="", prompt="Mine {x}")
    assert client.post(f"/hooks/{mine.pk}/remove/").status_code == 302
    assert not Trigger.objects.filter(pk=mine.pk).exists()


@pytest.mark.parametrize("prompt", ["Broken {", "{a[0]}", "lone }"])
def test_a_template_that_cannot_be_read_is_refused_and_nothing_made(owner, prompt):
    answer = login(owner).post("/hooks/", {"name": "x", "agent": "", "prompt": prompt})
    assert answer.status_code == 400
    assert not Trigger.objects.exists()


def test_an_agent_the_person_may_not_pick_is_refused(owner, stranger):
    Agent.objects.create(slug="private", name="Private", owner=stranger)
    answer = login(owner).post("/hooks/", {"name": "x", "agent": "private", "prompt": "Hi {x}"})
    assert answer.status_code == 400
    assert not Trigger.objects.exists()


def test_the_page_needs_a_sign_in(db):
    assert Client().get("/hooks/").status_code == 302


def test_the_admin_lists_a_trigger_without_its_secret(owner):
    admin = User.objects.create_superuser("root", password="x")
    row, secret = make_trigger(owner, agent="", prompt="Hi {x}", name="CI")
    client = login(admin)
    for url in ("/admin/hooks/trigger/", f"/admin/hooks/trigger/{row.pk}/change/"):
        page = client.get(url)
        assert page.status_code == 200
        assert secret not in page.content.decode()
    assert client.get("/admin/hooks/trigger/add/").status_code == 403
