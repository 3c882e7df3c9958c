"""The admin's page of what one person may use and why (chat/may_use.py), linked from their change page: every
model configuration, agent, tool and MCP server, allowed or not, with the group that allows it; their budget and
its rule. Staff who may view people see it; nobody else."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from agents.models import Agent
from chat.models import GroupTokenBudget
from mcpservers.models import McpServer
from modelconfig.models import ModelConfiguration
from tools.models import HttpTool, ToolSetting
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db


def rows(html: str) -> dict[str, tuple[str, str]]:
    """Name → (may use, why), from the page's tables."""
    found = {}
    for row in re.findall(r"<tr>\s*<td>(.*?)</td>\s*<td>.*?>(yes|no)<.*?</td>\s*<td>(.*?)</td>", html, re.S):
        found[row[0]] = (row[1], row[2])
    return found


@pytest.fixture
def things(owner, research):
    sync_tool_settings()
    ModelConfiguration.objects.create(name="Research model", api="demo").groups.add(research)
    ModelConfiguration.objects.create(name="Open model", api="demo")
    Agent.objects.create(slug="lab", name="Lab assistant").groups.add(research)
    Agent.objects.create(slug="mine", name="Owner's own", owner=owner)
    Agent.objects.create(slug="theirs", name="Someone else's", owner=get_user_model().objects.create_user("other"))
    ToolSetting.objects.get(name="calculator").groups.add(research)
    HttpTool.objects.create(name="weather", url_template="https://example.com/w", description="w").groups.add(research)
    McpServer.objects.create(name="docs", transport="http", url="https://mcp.example/mcp").groups.add(research)
    GroupTokenBudget.objects.create(group=research, daily_tokens=12345)


def page(viewer, person) -> tuple[int, str]:
    client = Client()
    client.force_login(viewer)
    response = client.get(f"/admin/auth/user/{person.pk}/may-use/")
    return response.status_code, response.content.decode()


def test_staff_see_what_a_member_may_use_and_the_group_that_allows_it(staff, member, things):
    status, html = page(staff, member)
    assert status == 200
    shown = rows(html)
    assert shown["Research model"] == ("yes", "group research")
    assert shown["Open model"] == ("yes", "everyone (no group named)")
    assert shown["Lab assistant"] == ("yes", "group research")
    assert shown["calculator"] == ("yes", "group research")
    assert shown["weather"] == ("yes", "group research")
    assert shown["docs"] == ("yes", "group research")
    assert "Someone else&#x27;s" not in html and "Owner&#x27;s own" not in html
    assert "12345 tokens (group research)" in html


def test_staff_see_what_someone_outside_may_not_use_and_why(staff, owner, things):
    status, html = page(staff, owner)
    assert status == 200
    shown = rows(html)
    assert shown["Research model"] == ("no", "only for research")
    assert shown["Lab assistant"] == ("no", "only for research")
    assert shown["calculator"] == ("no", "only for research")
    assert shown["docs"] == ("no", "only for research")
    assert shown["current_time"] == ("yes", "everyone (no group named)")
    assert shown["Owner&#x27;s own"] == ("yes", "their own agent")
    assert "Daily token budget: none (AGENTWEB_DAILY_TOKEN_BUDGET)" in html


def test_the_persons_change_page_links_to_it(django_user_model, member):
    root = django_user_model.objects.create_superuser("root", password="root-password-1")
    client = Client()
    client.force_login(root)
    html = client.get(f"/admin/auth/user/{member.pk}/change/").content.decode()
    assert f'href="/admin/auth/user/{member.pk}/may-use/"' in html


def test_nobody_else_sees_it(owner, stranger, member, django_user_model):
    plain_staff = django_user_model.objects.create_user("plain", password="plain-password-1", is_staff=True)
    assert page(plain_staff, member)[0] == 403
    status, _ = page(stranger, member)  # not staff: the admin's sign-in
    assert status == 302
    assert Client().get(f"/admin/auth/user/{member.pk}/may-use/").status_code == 302


def test_an_unknown_person_is_not_found(staff):
    client = Client()
    client.force_login(staff)
    assert client.get("/admin/auth/user/99999/may-use/").status_code == 404
