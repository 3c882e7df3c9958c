"""An MCP server kept for a group: its tools are in its members' tool sets only; anyone else's call of one is
"disabled", whatever an agent lists; a file's server can name its groups too; the admin sets them."""

import asyncio
import json

import pytest

from agents.models import Agent
from agents.services import AgentSpec, restrict_toolset
from chat.agent import RegistryToolbox
from providers.types import ToolCallRequest
from tools.mcp.config import McpConfigError, parse_mcp_servers
from tools.services import toolset_for_user

from .conftest import stdio_row, wait_connected

pytestmark = pytest.mark.django_db


def call(toolset, name: str, args: dict) -> str:
    toolbox = RegistryToolbox(toolset.registry, disabled=toolset.disabled)
    return asyncio.run(toolbox.execute(ToolCallRequest("c1", name, args))).content


def test_a_groups_server_is_in_its_members_tools_only(owner, member, research, record):
    stdio_row(record, require_approval=False).groups.add(research)
    wait_connected()
    assert "srv__add" in toolset_for_user(user=member).registry.names()
    outsider = toolset_for_user(user=owner)
    assert not [name for name in outsider.registry.names() if name.startswith("srv__")]
    assert call(outsider, "srv__add", {"a": 1, "b": 2}) == "Tool 'srv__add' is disabled."
    assert call(toolset_for_user(user=member), "srv__add", {"a": 1, "b": 2}) == "3.0"


def test_an_agent_that_lists_the_servers_tool_does_not_give_it_to_an_outsider(owner, member, research, record):
    stdio_row(record, require_approval=False).groups.add(research)
    wait_connected()
    agent = Agent.objects.create(slug="adder", name="Adder", all_tools=False, tools=["srv__add"])
    spec = AgentSpec.of(agent)
    assert restrict_toolset(toolset_for_user(user=member), spec).registry.names() == ["srv__add"]
    outsider = restrict_toolset(toolset_for_user(user=owner), spec)
    assert outsider.registry.names() == []
    assert call(outsider, "srv__add", {"a": 1, "b": 2}) == "Tool 'srv__add' is disabled."


def test_a_change_of_a_persons_groups_reaches_the_next_tool_set(owner, research, record):
    stdio_row(record).groups.add(research)
    wait_connected()
    assert "srv__add" not in toolset_for_user(user=owner).registry.names()
    owner.groups.add(research)
    assert "srv__add" in toolset_for_user(user=owner).registry.names()


def test_a_files_server_names_its_groups_and_a_wrong_value_is_refused():
    [config] = parse_mcp_servers({"mcpServers": {"docs": {"url": "https://mcp.example/mcp", "groups": ["research"]}}})
    assert config.groups == frozenset({"research"})
    assert config.may_use(frozenset({"research", "other"})) and not config.may_use(frozenset({"other"}))
    with pytest.raises(McpConfigError, match="'groups' must be a list of strings"):
        parse_mcp_servers({"mcpServers": {"docs": {"url": "https://mcp.example/mcp", "groups": "research"}}})
    [everyone] = parse_mcp_servers({"mcpServers": {"docs": {"url": "https://mcp.example/mcp"}}})
    assert everyone.may_use(frozenset())


def test_the_admin_sets_a_servers_groups(client, research, record, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="root-password-1")
    client.force_login(admin)
    row = stdio_row(record)
    page = client.get(f"/admin/mcpservers/mcpserver/{row.pk}/change/")
    assert page.status_code == 200 and "Who may use it" in page.content.decode()
    form = {
        "name": "srv",
        "transport": "stdio",
        "command": row.command,
        "args": json.dumps(row.args),
        "timeout": "60",
        "require_approval": "on",
        "approval_exempt": "[]",
        "offered_tools": "",
        "enabled": "on",
        "groups": [str(research.pk)],
    }
    response = client.post(f"/admin/mcpservers/mcpserver/{row.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    row.refresh_from_db()
    assert row.to_config().groups == frozenset({"research"})


def test_mcp_import_sets_a_servers_groups_and_refuses_a_group_that_does_not_exist(tmp_path, research):
    from io import StringIO

    from django.core.management import CommandError, call_command

    from mcpservers.models import McpServer

    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"docs": {"url": "https://mcp.example/mcp", "groups": ["research"]}}}))
    call_command("mcp", "import", str(path), stdout=StringIO())
    assert McpServer.objects.get(name="docs").group_names() == frozenset({"research"})
    path.write_text(json.dumps({"mcpServers": {"docs": {"url": "https://mcp.example/mcp", "groups": ["nobody"]}}}))
    with pytest.raises(CommandError, match="MCP server 'docs': no group is named 'nobody'"):
        call_command("mcp", "import", str(path), stdout=StringIO())
    assert McpServer.objects.get(name="docs").group_names() == frozenset({"research"})
    path.write_text(json.dumps({"mcpServers": {"docs": {"url": "https://mcp.example/mcp"}}}))
    call_command("mcp", "import", str(path), stdout=StringIO())
    assert McpServer.objects.get(name="docs").group_names() == frozenset()
