"""MCP tools in a user's tool set: approval by default, loosened per server, per tool or by rules."""

import asyncio

import pytest
from django.core.exceptions import ValidationError

from chat.agent import RegistryToolbox
from mcpservers.models import McpServer
from providers.types import ToolCallRequest
from tools.models import ApprovalRule
from tools.services import DEFAULT_APPROVAL, toolset_for_stamp, toolset_for_user

from .conftest import stdio_row, wait_connected

pytestmark = pytest.mark.django_db


def test_every_mcp_tool_asks_before_it_runs_by_default(owner, record):
    stdio_row(record)
    wait_connected()
    toolset = toolset_for_user(user=owner)
    assert toolset.registry.get("srv__add") is not None
    assert toolset.requirement("srv__add", {"a": 1, "b": 2}) == DEFAULT_APPROVAL


def test_a_server_without_approval_and_an_exempt_tool_run_at_once(owner, record):
    stdio_row(record, require_approval=False)
    stdio_row(record, name="other", approval_exempt=["add"])
    wait_connected()
    wait_connected("other")
    toolset = toolset_for_user(user=owner)
    assert toolset.requirement("srv__slow", {"seconds": 1}) is None
    assert toolset.requirement("other__add", {"a": 1, "b": 2}) is None
    assert toolset.requirement("other__slow", {"seconds": 1}) == DEFAULT_APPROVAL


def test_an_approval_rule_names_an_mcp_tool(owner, record):
    stdio_row(record)
    wait_connected()
    rule = ApprovalRule(tool_name="srv__add", argument="a", match="equals", pattern="1", action="allow")
    rule.full_clean()
    rule.save()
    with pytest.raises(ValidationError, match="argument"):
        ApprovalRule(tool_name="srv__add", argument="nope", match="equals", pattern="1").full_clean()
    toolset = toolset_for_user(user=owner)
    assert toolset.requirement("srv__add", {"a": 1, "b": 2}) is None
    assert toolset.requirement("srv__add", {"a": 2, "b": 2}) == DEFAULT_APPROVAL


def test_offered_tools_limit_the_tool_set(owner, record):
    stdio_row(record, offered_tools=["add"])
    wait_connected()
    names = {name for name in toolset_for_user(user=owner).registry.names() if name.startswith("srv__")}
    assert names == {"srv__add"}


def test_a_call_of_a_disabled_servers_tool_gets_disabled(owner, record):
    stdio_row(record, enabled=False)
    toolset = toolset_for_user(user=owner)
    assert "srv__add" in toolset.disabled and "srvx__add" not in toolset.disabled
    toolbox = RegistryToolbox(toolset.registry, disabled=toolset.disabled)
    result = asyncio.run(toolbox.execute(ToolCallRequest("c1", "srv__add", {"a": 1, "b": 2})))
    assert (result.status, result.content) == ("error", "Tool 'srv__add' is disabled.")


def wait_failed(name="srv", timeout=30.0):
    import time

    from tools.services import mcp_connections, mcp_tools

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        mcp_tools()
        state = mcp_connections().state(name)
        if state is not None and state.status == "failed":
            return state
        time.sleep(0.05)
    raise AssertionError(f"MCP server {name} did not fail: {mcp_connections().state(name)}")


def test_a_call_of_a_tool_of_a_server_that_never_connected_says_why(owner, record):
    stdio_row(record, command="/nonexistent/mcp-server")
    wait_failed()
    toolset = toolset_for_user(user=owner)
    assert toolset.registry.get("srv__add") is None and "srv__add" not in toolset.disabled
    toolbox = RegistryToolbox(toolset.registry, disabled=toolset.disabled)
    result = asyncio.run(toolbox.execute(ToolCallRequest("c1", "srv__add", {"a": 1, "b": 2})))
    assert result.status == "error"
    assert result.content.startswith("MCP server 'srv' is not connected (")
    assert "the app tries again in" in result.content
    other = asyncio.run(toolbox.execute(ToolCallRequest("c2", "srvx__add", {})))
    assert other.content.startswith("Unknown tool 'srvx__add'")


def test_an_approval_rule_for_a_server_not_connected_yet_says_so(record):
    stdio_row(record, command="/nonexistent/mcp-server")
    wait_failed()
    with pytest.raises(ValidationError) as raised:
        ApprovalRule(tool_name="srv__add", argument="a", match="equals", pattern="1").full_clean()
    assert raised.value.message_dict["tool_name"][0].startswith(
        "MCP server 'srv' is not connected yet; its tools' arguments are unknown."
    )
    with pytest.raises(ValidationError, match="No tool is called 'srvx__add'"):
        ApprovalRule(tool_name="srvx__add", argument="a", match="equals", pattern="1").full_clean()


def test_the_kept_tool_set_is_built_again_when_a_tool_list_changes(django_user_model, record):
    user = django_user_model.objects.create_user("kept", password="kept-password-1")
    stdio_row(record)
    first = toolset_for_stamp(user=user, groups=frozenset(), stamp="s1")
    wait_connected()
    second = toolset_for_stamp(user=user, groups=frozenset(), stamp="s1")
    assert first.registry.get("srv__add") is None and second.registry.get("srv__add") is not None
    assert toolset_for_stamp(user=user, groups=frozenset(), stamp="s1") is second


def test_a_change_of_a_server_gives_a_new_settings_stamp(record):
    from tools.models import SettingsStamp

    row = stdio_row(record)
    before = SettingsStamp.objects.get().stamp
    McpServer.objects.filter(pk=row.pk).first().save()
    assert SettingsStamp.objects.get().stamp != before


def test_the_servers_of_the_config_file_are_offered(owner, record, settings, tmp_path):
    import json
    import sys

    from tests.support.mcp_servers.running import SCRIPT

    path = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(SCRIPT)], "env": {"MCP_TEST_RECORD": str(record)}}
    path.write_text(json.dumps({"mcpServers": {"fromfile": entry | {"requireApproval": False}}}))
    settings.AGENTWEB_MCP_CONFIG = str(path)
    wait_connected("fromfile")
    toolset = toolset_for_user(user=owner)
    assert toolset.registry.get("fromfile__add") is not None
    assert toolset.requirement("fromfile__add", {"a": 1, "b": 2}) is None


def test_the_tools_panel_lists_mcp_tools_with_their_approval(owner, record):
    from django.test import Client

    stdio_row(record, approval_exempt=["add"])
    wait_connected()
    client = Client()
    client.force_login(owner)
    tools = {tool["name"]: tool for tool in client.get("/tools/available").json()["tools"]}
    assert tools["srv__add"] == {"name": "srv__add", "description": "Add two numbers.", "approval": "never"}
    assert tools["srv__slow"]["approval"] == "always"
