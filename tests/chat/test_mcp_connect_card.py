"""A run calls a tool of an MCP server each person connects to, before the person has connected: the call's card
asks them to (tool_call.connect_requested), they sign in at the server's authorization server from the page the
card links to, and the call goes on with their own token. Cancel ends the call without running it."""

# ruff: noqa: F811  (the fixtures imported below are the tests' parameters)

import pytest
from asgiref.sync import sync_to_async

from tests.chat.test_runs_with_model_server import answer, calls, tool_messages
from tests.mcpconnect.conftest import (  # noqa: F401
    browser,
    connect_oauth,
    connections,
    oauth_server,
    per_person_row,
    record,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def known_tools(oauth_server, person):
    """Someone connected once (the tools are known), then disconnected: `person` is not connected."""
    await sync_to_async(per_person_row)(oauth_server)
    client = await sync_to_async(browser)(person)
    await sync_to_async(connect_oauth)(client, oauth_server, "someone")
    await sync_to_async(client.post)("/mcp/connections/srv/disconnect")
    return client


async def test_the_card_asks_to_connect_and_the_call_goes_on_once_connected(
    connect, owner, model_server, oauth_server, record
):
    tab = await known_tools(oauth_server, owner)
    model_server.enqueue(calls(("c1", "srv__whoami", {})), answer("You are ann."))
    client = await connect(owner)
    await client.ask("who am I there?")
    asked = (await client.until("tool_call.connect_requested"))[-1]
    assert (asked["server"], asked["mode"], asked["url"]) == ("srv", "oauth", "/mcp/connections/?server=srv")

    await sync_to_async(connect_oauth)(tab, oauth_server, "ann")
    events = await client.run_to_end()
    closed = next(e for e in events if e["type"] == "tool_call.input_answered")
    assert (closed["request"], closed["action"]) == (asked["request"], "accept")
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("success", "you are ann")
    assert tool_messages(model_server.requests[1])[0]["content"] == "you are ann"
    assert events[-1]["type"] == "run.completed"


async def test_cancel_on_the_card_ends_the_call_unrun(connect, owner, model_server, oauth_server, record):
    await known_tools(oauth_server, owner)
    model_server.enqueue(calls(("c1", "srv__whoami", {})), answer("Not connected."))
    client = await connect(owner)
    await client.ask("who am I there?")
    asked = (await client.until("tool_call.connect_requested"))[-1]
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action="cancel",
    )  # fmt: skip
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert completed["status"] == "error" and "did not connect" in completed["content"]
    assert "whoami" not in record.read_text().replace("whoami someone", "")
