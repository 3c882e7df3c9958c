"""MCP servers that change under the app, through the websocket, the agent loop and the scripted model server: a
server that crashes mid-call (the model reads an error, the run answers; the server is connected again and a later
turn's call works), a tool list that grows (the next turn offers the new tool), a server that is down at start (a
turn without it is not held up, a call of its tool says why, the server connects once it is up), and an HTTP
server's URL that never reaches a log line. The servers are the real test server (tests/support/mcp_servers/);
reconnects are quick (tests/mcpservers/conftest.py)."""

# ruff: noqa: F811  (the fixtures imported below are the tests' parameters)

import asyncio
import logging
import socket
import time

import pytest
from asgiref.sync import sync_to_async

from mcpservers.models import McpServer
from tests.chat.test_mcp_tool_loop import mcp_server, wait_for
from tests.chat.test_runs_with_model_server import answer, calls, tool_messages
from tests.mcpservers.conftest import connections, record, wait_connected  # noqa: F401
from tests.support.mcp_servers.running import HttpServer
from tools.services import mcp_connections

pytestmark = pytest.mark.django_db(transaction=True)


def offered(request) -> set[str]:
    return {tool["function"]["name"] for tool in request["json"].get("tools", [])}


def completed_of(events) -> dict:
    return next(e for e in events if e["type"] == "tool_call.completed")


async def test_a_server_that_crashes_mid_call_gives_an_error_result_and_is_connected_again(
    connect, owner, model_server, record
):
    await mcp_server(record, require_approval=False)
    connected_since = mcp_connections().state("srv").since
    model_server.enqueue(calls(("c1", "srv__crash", {})), answer("The server crashed, sorry."))
    client = await connect(owner)
    await client.ask("crash it")
    events = await client.run_to_end()
    completed = completed_of(events)
    assert completed["status"] == "error"
    assert completed["content"] == "MCP server 'srv' closed the connection during the call."
    assert tool_messages(model_server.requests[1])[0]["content"] == completed["content"]
    assert events[-1]["type"] == "run.completed"
    assert "crash" in record.read_text()

    # A new process of the server, connected with the quick backoff; the next turn's call reaches it.
    def reconnected():
        state = mcp_connections().state("srv")
        return state.status == "connected" and state.since > connected_since

    await wait_for(reconnected)
    model_server.enqueue(calls(("c2", "srv__add", {"a": 1, "b": 2})), answer("3."))
    await client.ask("and now 1+2?", thread=events[0]["thread"])
    events = await client.run_to_end()
    assert (completed_of(events)["status"], completed_of(events)["content"]) == ("success", "3.0")
    assert events[-1]["type"] == "run.completed"


async def test_after_the_tool_list_grows_the_next_turn_offers_the_new_tool(connect, owner, model_server, record):
    await mcp_server(record, require_approval=False)
    model_server.enqueue(calls(("c1", "srv__grow", {})), answer("Grown."))
    client = await connect(owner)
    await client.ask("grow")
    events = await client.run_to_end()
    assert completed_of(events)["content"] == "grown"
    assert "srv__grow" in offered(model_server.requests[0]) and "srv__extra" not in offered(model_server.requests[0])

    # notifications/tools/list_changed: the connection lists the tools again, in the background.
    await wait_for(lambda: any(tool.name == "extra" for tool in mcp_connections().state("srv").tools))
    model_server.enqueue(calls(("c2", "srv__extra", {"text": "loud"})), answer("LOUD."))
    await client.ask("shout", thread=events[0]["thread"])
    events = await client.run_to_end()
    assert "srv__extra" in offered(model_server.requests[2])
    assert (completed_of(events)["status"], completed_of(events)["content"]) == ("success", "LOUD")


async def test_a_server_down_at_start_holds_up_nothing_its_calls_say_why_and_it_connects_once_up(
    connect, owner, model_server, record
):
    # Down: something listens on its port and never answers, so connecting waits up to the server's timeout.
    silent = socket.create_server(("127.0.0.1", 0))
    port = silent.getsockname()[1]
    server = HttpServer(record, port=port)
    await sync_to_async(McpServer.objects.create)(
        name="srv", transport="http", url=server.url, timeout=20, require_approval=False
    )
    try:
        model_server.enqueue(answer("Hello."))
        client = await connect(owner)
        started = time.monotonic()
        await client.ask("hello")  # the first turn starts the connection
        events = await client.run_to_end()
        assert events[-1]["type"] == "run.completed"
        assert time.monotonic() - started < 5
        assert mcp_connections().state("srv").status == "connecting"
        assert "srv__add" not in offered(model_server.requests[0])

        # The model names the tool (from an earlier list, say): an error result says why, and the run goes on.
        model_server.enqueue(calls(("c1", "srv__add", {"a": 1, "b": 2})), answer("It is not reachable."))
        await client.ask("1+2?", thread=events[0]["thread"])
        events = await client.run_to_end()
        completed = completed_of(events)
        assert (completed["status"], completed["content"]) == (
            "error",
            "MCP server 'srv' is still connecting; try again in a moment.",
        )
        assert events[-1]["type"] == "run.completed"
    finally:
        silent.close()  # the waiting connection is reset: the attempt fails, the next one finds the server

    await sync_to_async(server.start)()
    try:
        await wait_for(lambda: mcp_connections().state("srv").status == "connected", timeout=60)
        model_server.enqueue(calls(("c2", "srv__add", {"a": 1, "b": 2})), answer("3."))
        await client.ask("1+2 now?", thread=events[0]["thread"])
        events = await client.run_to_end()
        assert "srv__add" in offered(model_server.requests[-2])
        assert (completed_of(events)["status"], completed_of(events)["content"]) == ("success", "3.0")
    finally:
        await sync_to_async(server.stop)()


async def test_an_http_servers_url_is_never_logged(connect, owner, model_server, record, caplog):
    token = "query-token-never-logged"
    server = await sync_to_async(HttpServer(record).start)()
    try:
        url = f"{server.url}?token={token}"
        await sync_to_async(McpServer.objects.create)(name="srv", transport="http", url=url, require_approval=False)
        caplog.set_level(logging.DEBUG, logger="agentweb")
        await sync_to_async(wait_connected)()
        model_server.enqueue(calls(("c1", "srv__add", {"a": 20, "b": 22})), answer("42."))
        client = await connect(owner)
        await client.ask("20+22?")
        events = await client.run_to_end()
        assert (completed_of(events)["status"], completed_of(events)["content"]) == ("success", "42.0")
    finally:
        await sync_to_async(server.stop)()
    await asyncio.sleep(0.2)  # the connection's last lines, as it closes
    logged = [record.getMessage() for record in caplog.records]
    assert any("MCP server srv connected" in line for line in logged)  # lines of the MCP code are captured
    assert not [line for line in logged if token in line or "/mcp" in line]
