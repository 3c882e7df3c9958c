"""GET /tools/available (chat/tools_panel.py): the tools this user may use now, for the chat page's Tools panel."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from tools.models import ApprovalRule, HttpTool, ToolSetting
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db

URL = "/tools/available"
XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


@pytest.fixture(autouse=True)
def rows_for_the_code_tools():
    sync_tool_settings()


def person(username: str, *groups: str):
    user = get_user_model().objects.create_user(username)  # no password: force_login needs none
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


def tools_of(user) -> dict[str, dict]:
    client = Client()
    client.force_login(user)
    response = client.get(URL)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    return {item["name"]: item for item in response.json()["tools"]}


def test_a_person_gets_the_enabled_tools_with_their_descriptions():
    tools = tools_of(person("ada"))
    assert {"calculator", "current_time", "fetch_url", "remember", "recall"} <= set(tools)
    assert tools["calculator"]["description"].startswith("Evaluate")
    assert tools["calculator"]["approval"] == "never"
    assert set(tools["calculator"]) == {"name", "description", "approval"}


def test_the_admins_description_comes_back_as_written():
    ToolSetting.objects.filter(name="calculator").update(description_override=XSS)
    assert tools_of(person("ada"))["calculator"]["description"] == XSS


def test_disabled_tools_and_tools_of_other_groups_are_left_out():
    ToolSetting.objects.filter(name="fetch_url").update(enabled=False)
    ToolSetting.objects.get(name="remember").groups.add(Group.objects.create(name="staff"))
    plain = tools_of(person("ada"))
    assert "fetch_url" not in plain
    assert "remember" not in plain
    assert "remember" in tools_of(person("grace", "staff"))


def test_approval_says_always_never_or_depends_on_the_arguments():
    ToolSetting.objects.filter(name="calculator").update(requires_approval=True)
    ToolSetting.objects.filter(name__in=["remember", "fetch_url"]).update(requires_approval=True)
    ApprovalRule.objects.create(tool_name="fetch_url", argument="url", match="host", pattern="example.com")
    ApprovalRule.objects.create(tool_name="remember", argument="key", match="equals", pattern="x", action="ask")
    ApprovalRule.objects.create(tool_name="current_time", argument="timezone", match="equals", pattern="UTC")
    ApprovalRule.objects.create(tool_name="recall", argument="key", match="equals", pattern="x", action="ask")
    tools = tools_of(person("ada"))
    assert tools["calculator"]["approval"] == "always"
    assert tools["remember"]["approval"] == "always"  # a rule that asks, on a tool that always asks
    assert tools["fetch_url"]["approval"] == "depends"  # asks, but for example.com
    assert tools["recall"]["approval"] == "depends"  # never asks, but for key "x"
    assert tools["current_time"]["approval"] == "never"  # a rule that allows, on a tool that never asks
    assert tools["forget"]["approval"] == "never"


def test_http_tools_are_listed_too():
    HttpTool.objects.create(
        name="lookup",
        description="Look up an item.",
        parameters={"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]},
        url_template="https://api.example.com/items/{item_id}",
        headers={"Authorization": "Bearer sk-test-secret-value"},
        requires_approval=True,
    )
    client = Client()
    client.force_login(person("ada"))
    response = client.get(URL)
    tools = {item["name"]: item for item in response.json()["tools"]}
    assert tools["lookup"] == {"name": "lookup", "description": "Look up an item.", "approval": "always"}
    assert b"sk-test-secret-value" not in response.content
    assert b"api.example.com" not in response.content


def test_login_is_required_and_only_get_is_allowed():
    anonymous = Client().get(URL)
    assert anonymous.status_code == 302
    assert "/accounts/login/" in anonymous["Location"]
    client = Client()
    client.force_login(person("ada"))
    assert client.post(URL).status_code == 405


def test_an_agent_cuts_the_list_down_to_its_tools_and_another_persons_agent_is_not_found():
    from agents.models import Agent

    ada, grace = person("ada"), person("grace")
    Agent.objects.create(slug="maths", name="Maths", all_tools=False, tools=["calculator", "current_time"])
    Agent.objects.create(slug="graces", name="Grace's", owner=grace)
    client = Client()
    client.force_login(ada)
    listed = client.get(URL, {"agent": "maths"}).json()["tools"]
    assert sorted(item["name"] for item in listed) == ["calculator", "current_time"]
    assert client.get(URL, {"agent": "graces"}).status_code == 404
