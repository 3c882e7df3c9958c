"""The settings page as the person's home: their new chats' default agent and model (stored per person, offered only
while they may pick them, used by the empty chat), and their usage over the last 30 days as a chart with a table."""

import datetime
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from agents.models import Agent
from chat.home import usage_by_day
from chat.models import ChatDefaults, Usage

pytestmark = pytest.mark.django_db


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_default_agent_is_stored_and_pressed_on_the_empty_chat(owner):
    Agent.objects.create(slug="helper", name="Helper", is_default=True)
    Agent.objects.create(slug="tutor", name="Maths tutor")
    client = login(owner)
    response = client.post("/settings/", {"form": "defaults", "agent": "tutor", "model": ""})
    assert response.status_code == 302
    assert ChatDefaults.objects.get(user=owner).agent == "tutor"
    assert '<option value="tutor" selected>' in client.get("/settings/").content.decode()
    page = client.get("/").content.decode()
    assert 'data-slug="tutor" data-model="" data-steps="' in page
    tutor = page[page.index('data-slug="tutor"') :]
    assert 'aria-pressed="true"' in tutor[: tutor.index(">")]
    helper = page[page.index('data-slug="helper"') :]
    assert 'aria-pressed="false"' in helper[: helper.index(">")]


def test_an_agent_the_person_may_not_pick_is_refused_and_nothing_is_stored(owner, stranger):
    Agent.objects.create(slug="theirs", name="Theirs", owner=stranger)
    response = login(owner).post("/settings/", {"form": "defaults", "agent": "theirs", "model": ""})
    assert response.status_code == 400
    assert "That agent is not one you can pick." in response.content.decode()
    assert not ChatDefaults.objects.filter(user=owner).exists()


def test_an_unknown_model_is_refused_and_a_stored_one_no_longer_offered_is_not_applied(owner):
    client = login(owner)
    response = client.post("/settings/", {"form": "defaults", "agent": "", "model": "no-such-model"})
    assert response.status_code == 400
    assert not ChatDefaults.objects.filter(user=owner).exists()
    ChatDefaults.objects.create(user=owner, model="gone-since")
    assert '"personal": true' not in client.get("/").content.decode()


def test_the_usage_chart_has_one_bar_per_day_used_and_a_table_with_the_numbers(owner, stranger):
    now = timezone.now()
    Usage.objects.create(user=owner, input_tokens=1000, output_tokens=200, cost=Decimal("0.01"), created_at=now)
    Usage.objects.create(user=owner, input_tokens=500, output_tokens=100, created_at=now)
    Usage.objects.create(user=owner, input_tokens=40, output_tokens=2, created_at=now - datetime.timedelta(days=3))
    Usage.objects.create(user=owner, input_tokens=9999, output_tokens=1, created_at=now - datetime.timedelta(days=40))
    Usage.objects.create(user=stranger, input_tokens=7777, output_tokens=1, created_at=now)
    usage = usage_by_day(owner, now=now)
    assert len(usage["days"]) == 30
    assert [(d.input_tokens, d.output_tokens) for d in usage["used"]] == [(40, 2), (1500, 300)]
    assert usage["total_tokens"] == 1842
    assert usage["used"][-1].cost_text == "$0.01"
    assert usage["used"][0].height < usage["used"][-1].height == usage["height"] - 12

    page = login(owner).get("/settings/").content.decode()
    today = now.astimezone(datetime.UTC).date().isoformat()
    assert f'<rect class="usage-bar" data-date="{today}"' in page
    assert f'<tr data-date="{today}">' in page
    assert "<td>1500</td><td>300</td><td>$0.01</td>" in page
    assert "7777" not in page and "9999" not in page


def test_without_use_the_page_says_so_and_draws_no_chart(owner):
    page = login(owner).get("/settings/").content.decode()
    assert 'id="usage-none"' in page
    assert 'id="usage-chart"' not in page
