"""The chat page's first screen: a thread's last messages in the HTML, escaped and sanitised."""

import json
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from chat.models import Message, Thread, ToolCall
from chat.views import FIRST_SCREEN_MESSAGES
from modelconfig.models import ModelConfiguration

pytestmark = pytest.mark.django_db


def page_of(user, thread) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/t/{thread.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_carries_the_last_messages_as_html(owner):
    thread = Thread.objects.create(owner=owner, title="long")
    for order in range(1, 61):
        role = Message.Role.USER if order % 2 else Message.Role.ASSISTANT
        Message.objects.create(thread=thread, order=order, role=role, content=f"message number {order}")
    html = page_of(owner, thread)
    assert html.count("data-prerendered>") == FIRST_SCREEN_MESSAGES + 1  # the messages and the "earlier" note
    assert "message number 60" in html
    assert f"message number {60 - FIRST_SCREEN_MESSAGES + 1}<" in html
    assert f"message number {60 - FIRST_SCREEN_MESSAGES}<" not in html
    assert "Earlier messages load as you scroll up." in html
    assert "Loading the conversation" not in html


def test_first_screen_content_is_escaped_and_sanitised(owner):
    thread = Thread.objects.create(owner=owner, title="xss")
    Message.objects.create(thread=thread, order=1, role=Message.Role.USER, content="<img src=x onerror=alert(1)>")
    answer = Message.objects.create(
        thread=thread,
        order=2,
        role=Message.Role.ASSISTANT,
        content="**bold** <script>alert(2)</script> [x](javascript:alert(3))",
    )
    ToolCall.objects.create(message=answer, index=0, call_id="c1", name="<b>calc</b>", args={}, status="success")
    Message.objects.create(thread=thread, order=3, role=Message.Role.SYSTEM, content="secret system prompt")
    html = page_of(owner, thread)
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script>alert(2)" not in html
    assert "<strong>bold</strong>" in html
    assert "javascript:alert(3)" not in html.split('id="messages"')[1].split("</main>")[0].replace("&quot;", '"')
    assert "&lt;b&gt;calc&lt;/b&gt;" in html
    assert "secret system prompt" not in html
    assert "earlier messages" not in html


def test_first_screen_shows_a_turns_model_calls_as_one_answer(owner):
    thread = Thread.objects.create(owner=owner, title="turn")
    Message.objects.create(thread=thread, order=1, role=Message.Role.USER, content="what is 23*19?")
    asking = Message.objects.create(thread=thread, order=2, role=Message.Role.ASSISTANT, content="Let me work it out.")
    ToolCall.objects.create(message=asking, index=0, call_id="c1", name="calculator", args={}, status="success")
    Message.objects.create(thread=thread, order=3, role=Message.Role.TOOL, content="437", tool_call_id="c1")
    Message.objects.create(thread=thread, order=4, role=Message.Role.ASSISTANT, content="It is 437.")
    Message.objects.create(thread=thread, order=5, role=Message.Role.USER, content="thanks")
    html = page_of(owner, thread).split('id="messages"')[1].split("</main>")[0]
    assert html.count('class="message assistant answer"') == 1
    answer = html.split('class="message assistant answer"')[1].split('class="message user"')[0]
    assert answer.count('class="answer-segment"') == 2
    assert answer.index("Let me work it out.") < answer.index("calculator") < answer.index("It is 437.")
    assert html.count('class="message user"') == 2


def test_an_empty_thread_shows_the_loading_note(owner):
    thread = Thread.objects.create(owner=owner, title="empty")
    assert "Loading the conversation" in page_of(owner, thread)


def model_row(name: str) -> ModelConfiguration:
    """A configuration an admin saved (its save gives the settings a new stamp, as the admin's does)."""
    return ModelConfiguration.objects.create(name=name, api="openai", base_url="http://127.0.0.1:9/v1", model="m")


def test_a_page_reads_no_model_configuration_while_the_settings_stay_the_same(owner):
    model_row(name="Work model")
    client = Client()
    client.force_login(owner)
    client.get("/")  # this process reads them once, under the settings' stamp

    with CaptureQueriesContext(connection) as page:
        assert "Work model" in client.get("/").content.decode()

    assert not [q["sql"] for q in page.captured_queries if "modelconfig_modelconfiguration" in q["sql"]]


def test_a_model_configuration_saved_is_in_the_next_pages_picker(owner):
    client = Client()
    client.force_login(owner)
    assert "Work model" not in client.get("/").content.decode()

    row = model_row(name="Work model")
    assert "Work model" in client.get("/").content.decode()

    row.name = "Team model"
    row.save()
    html = client.get("/").content.decode()
    assert "Team model" in html and "Work model" not in html


def statements_of_home_page(user) -> tuple[int, str]:
    client = Client()
    client.force_login(user)
    client.get("/")  # what a process reads once (the settings under their stamp)
    with CaptureQueriesContext(connection) as page:
        html = client.get("/").content.decode()
    return len(page.captured_queries), html


def test_a_sidebar_of_many_chats_costs_the_page_no_more_statements_than_one(owner):
    from django.utils import timezone

    from agents.models import Agent

    agent = Agent.objects.create(slug="maths", name="Maths")
    Thread.objects.create(owner=owner, title="only chat")
    one, _ = statements_of_home_page(owner)

    for n in range(30):
        Thread.objects.create(
            owner=owner,
            title=f"chat {n}",
            agent=agent if n % 3 == 0 else None,
            pinned_at=timezone.now() if n % 5 == 0 else None,
            archived_at=timezone.now() if n % 4 == 0 else None,
        )
    many, html = statements_of_home_page(owner)

    assert many == one
    assert "chat 29" in html and 'data-agent="maths"' in html and 'data-archived="true"' in html


def test_a_page_reads_no_agent_or_group_while_the_settings_stay_the_same(owner):
    from django.contrib.auth.models import Group

    from agents.models import Agent

    Agent.objects.create(slug="maths", name="Maths", starter_prompts=["What is 2 + 2?"])
    owner.groups.add(Group.objects.create(name="staff"))
    client = Client()
    client.force_login(owner)
    client.get("/")

    with CaptureQueriesContext(connection) as page:
        html = client.get("/").content.decode()

    assert "Maths" in html
    read = [q["sql"] for q in page.captured_queries if 'FROM "agents_agent"' in q["sql"] or '"auth_group"' in q["sql"]]
    assert not read


def starter_prompts(html: str) -> dict:
    """What the page gives static/chat/starters.js (a json_script element)."""
    found = re.search(r'<script id="starter-prompts" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(found.group(1))


def test_an_agents_suggested_prompts_are_read_once_under_the_settings_and_follow_its_tools(owner):
    from agents.models import Agent

    agent = Agent.objects.create(slug="clock", name="Clock", all_tools=False, tools=["current_time"])
    client = Client()
    client.force_login(owner)
    client.get("/")

    with CaptureQueriesContext(connection) as page:
        html = client.get("/").content.decode()

    assert not [q["sql"] for q in page.captured_queries if 'FROM "agents_agent"' in q["sql"]]
    starters = starter_prompts(html)
    assert "What time is it in Europe/Paris?" in starters["clock"]["demo"]
    assert "What is 23*19?" not in starters["clock"]["demo"]

    agent.tools = ["calculator"]
    agent.save()  # a new settings stamp: the next page works them out again
    starters = starter_prompts(client.get("/").content.decode())
    assert "What is 23*19?" in starters["clock"]["demo"]
    assert "What time is it in Europe/Paris?" not in starters["clock"]["demo"]


def test_an_agent_saved_is_in_the_next_pages_picker(owner):
    from agents.models import Agent

    client = Client()
    client.force_login(owner)
    assert "Maths" not in client.get("/").content.decode()

    Agent.objects.create(slug="maths", name="Maths", owner=owner)
    assert "Maths" in client.get("/").content.decode()
