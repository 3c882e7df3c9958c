"""The empty chat's starting prompts (chat/starters.py): the agent's own, else suggestions that fit the model (the demo
model's script, or a real model) and the tools the chat would have; none on a stored chat's page."""

import json
import re

import pytest
from django.test import Client

from agents.models import Agent
from chat.models import Thread
from chat.starters import suggestions
from tools.models import ToolSetting
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db


def starters_on(page: str) -> dict:
    found = re.search(r'<script id="starter-prompts" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(found.group(1)) if found else None


def home(user) -> str:
    client = Client()
    client.force_login(user)
    return client.get("/").content.decode()


def test_the_demo_models_suggestions_are_what_its_script_understands():
    assert suggestions({"calculator", "current_time"}, demo=True) == [
        "What is 23*19?",
        "What time is it in Europe/Paris?",
        "What is (17+4)*3, and what time is it in UTC?",
        "Hello! What can you do?",
    ]
    assert suggestions({"current_time"}, demo=True) == ["What time is it in Europe/Paris?", "Hello! What can you do?"]


def test_a_real_models_suggestions_ask_for_the_tools_it_has_then_general_things():
    with_tools = suggestions({"calculator", "current_time", "fetch_url"}, demo=False)
    assert len(with_tools) == 4
    assert with_tools[:2] == ["What is 17.5% of 2,340?", "What time is it in Tokyo right now?"]
    without = suggestions(set(), demo=False)
    assert len(without) == 3 and not any("Tokyo" in s or "%" in s for s in without)


def test_the_page_offers_the_agents_own_prompts_or_suggestions_for_its_tools(owner):
    sync_tool_settings()
    ToolSetting.objects.filter(name="current_time").update(enabled=False)
    Agent.objects.create(slug="tutor", name="Tutor", starter_prompts=["What is 2+2?"])
    Agent.objects.create(slug="clock", name="Clock", all_tools=False, tools=["calculator"])
    found = starters_on(home(owner))
    assert found["tutor"] == {"agent": ["What is 2+2?"]}
    assert found["clock"]["demo"] == ["What is 23*19?", "Hello! What can you do?"]
    # The admin switched current_time off: no suggestion asks for the time.
    assert not any("time" in s.lower() for s in found[""]["demo"] + found[""]["model"])


def test_a_stored_chats_page_has_none(owner):
    thread = Thread.objects.create(owner=owner, title="t")
    client = Client()
    client.force_login(owner)
    assert starters_on(client.get(f"/t/{thread.pk}/").content.decode()) is None


def test_the_prompts_follow_an_admins_change_of_the_tools_after_the_first_page(owner):
    sync_tool_settings()
    assert any("time" in s.lower() for s in starters_on(home(owner))[""]["demo"])
    setting = ToolSetting.objects.get(name="current_time")

    setting.enabled = False
    setting.save()  # as the admin saves it: the settings' stamp changes

    assert not any("time" in s.lower() for s in starters_on(home(owner))[""]["demo"])


def test_a_german_page_suggests_in_german_keeping_what_the_demo_models_script_reads(owner):
    sync_tool_settings()
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.force_login(owner)
    found = starters_on(client.get("/").content.decode())
    assert found[""]["demo"][:2] == ["Was ist 23*19?", "Wie spät ist es in Europe/Paris?"]
    assert "Wobei kannst du mir helfen? Antworte in drei kurzen Stichpunkten." in found[""]["model"]
