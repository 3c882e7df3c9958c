"""MCP tools through the executor, as the agent loop runs them."""

import asyncio

from tests.support.mcp_servers.running import stdio_config
from tests.tools.mcp.conftest import connected, wait_until
from tools.executor import execute_tool
from tools.mcp.tools import build_tool, server_tools
from tools.registry import ToolRegistry


async def registry_for(manager, config):
    manager.configure([config])
    state = await connected(manager)
    return ToolRegistry(server_tools(config, state, manager))


async def test_tools_carry_the_servers_schema_approval_and_timeout(manager, record):
    config = stdio_config("srv", record, timeout=7, approval_exempt=frozenset({"add"}))
    registry = await registry_for(manager, config)
    add = registry.get("srv__add")
    assert add.description == "Add two numbers."
    assert add.parameters["required"] == ["a", "b"] and add.timeout == 7
    assert not add.requires_approval and registry.get("srv__slow").requires_approval
    assert add.response_format == "content_and_artifact"


async def test_offered_tools_limit_what_is_built(manager, record):
    registry = await registry_for(manager, stdio_config("srv", record, offered_tools=frozenset({"add", "fail"})))
    assert sorted(registry.names()) == ["srv__add", "srv__fail"]


async def test_a_call_validates_its_arguments_against_the_schema(manager, record):
    registry = await registry_for(manager, stdio_config("srv", record))
    result = await execute_tool(registry, "srv__add", {"a": 1})
    assert result.status == "error" and "Invalid arguments for srv__add" in result.content
    result = await execute_tool(registry, "srv__add", {"a": "1", "b": 2})
    assert (result.status, result.content) == ("success", "3.0")


async def test_is_error_becomes_an_error_result(manager, record):
    registry = await registry_for(manager, stdio_config("srv", record))
    result = await execute_tool(registry, "srv__fail", {"reason": "no disk"})
    assert result.status == "error" and "cannot do it: no disk" in result.content


async def test_an_image_is_the_artifact_and_its_summary_the_content(manager, record):
    registry = await registry_for(manager, stdio_config("srv", record))
    result = await execute_tool(registry, "srv__picture", {})
    assert result.status == "success"
    assert result.content == "a single pixel\n[image image/png, 70 B]"
    assert result.artifact["content"][0]["mimeType"] == "image/png"


async def test_the_servers_timeout_cancels_the_request_on_the_server(manager, record):
    # Connected under a longer timeout first: the server's timeout bounds connecting too, and a Python server can
    # take over a second to start on a loaded machine. A change of the timeout alone keeps the connection.
    await registry_for(manager, stdio_config("srv", record, timeout=30))
    registry = await registry_for(manager, stdio_config("srv", record, timeout=1))
    result = await execute_tool(registry, "srv__slow", {"seconds": 30})
    assert result.status == "error" and "timed out after 1 s" in result.content
    await wait_until(lambda: "cancelled" in record.read_text())


async def test_a_call_while_its_server_is_down_fails_at_once(manager, record, tmp_path):
    down = stdio_config("down", record, command=str(tmp_path / "no-such-program"))
    up = stdio_config("srv", record)
    manager.configure([down, up])
    await wait_until(lambda: manager.state("down").status == "failed")
    error = manager.state("down").error
    assert "the command '" in error and "no-such-program' is not found" in error
    [add] = [tool for tool in (await connected(manager)).tools if tool.name == "add"]
    registry = ToolRegistry([build_tool(down, add, manager)])  # as if "down" had listed it before it went down
    started = asyncio.get_running_loop().time()
    result = await execute_tool(registry, "down__add", {"a": 1, "b": 2})
    assert result.status == "error"
    assert "MCP server 'down' is not connected (" in result.content and "tries again in" in result.content
    assert asyncio.get_running_loop().time() - started < 1
    assert (await execute_tool(await registry_for(manager, up), "srv__add", {"a": 1, "b": 2})).content == "3.0"
