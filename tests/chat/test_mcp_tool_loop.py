"""An MCP server's tool in the agent loop, through the websocket: the model asks for it, a person approves (the
default for MCP tools), the server runs it, the result goes back to the model, the model answers; and the same
without approval. The MCP server is the real test server over stdio; the model is the scripted model server."""

# ruff: noqa: F811  (the fixtures imported below are the tests' parameters)

import asyncio

import pytest
from asgiref.sync import sync_to_async

from chat.models import Message
from mcpservers.models import McpServer
from tests.chat.test_runs_with_model_server import answer, calls, tool_messages
from tests.mcpservers.conftest import connections, record, stdio_row, wait_connected  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


async def mcp_server(record, **fields):
    await sync_to_async(stdio_row)(record, **fields)
    await sync_to_async(wait_connected)()


async def test_the_model_calls_an_mcp_tool_after_a_person_approves(connect, owner, model_server, record):
    await mcp_server(record)
    model_server.enqueue(calls(("c1", "srv__add", {"a": 20, "b": 22})), answer("It is 42."))
    client = await connect(owner)
    await client.ask("what is 20+22?")
    events = await client.until("run.waiting")
    awaiting = next(e for e in events if e["type"] == "tool_call.awaiting_approval")
    assert awaiting["allow"] == {"approve": True, "edit": True, "reject": True, "respond": True}
    offered = {tool["function"]["name"] for tool in model_server.requests[0]["json"]["tools"]}
    assert "srv__add" in offered

    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="approve")
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("success", "42.0")
    assert tool_messages(model_server.requests[1])[0]["content"] == "42.0"
    assert events[-1]["type"] == "run.completed"


async def test_without_approval_the_mcp_tool_runs_at_once(connect, owner, model_server, record):
    await mcp_server(record, require_approval=False)
    model_server.enqueue(calls(("c1", "srv__picture", {})), answer("Here is the picture."))
    client = await connect(owner)
    await client.ask("draw")
    events = await client.run_to_end()
    assert not [e for e in events if e["type"] == "tool_call.awaiting_approval"]
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"], completed["has_artifact"]) == (
        "success",
        "a single pixel\n[image image/png, 70 B]",
        True,
    )
    stored = await Message.objects.aget(role="tool")
    assert stored.artifact["content"][0]["mimeType"] == "image/png"
    assert events[-1]["type"] == "run.completed"


async def test_stop_during_an_mcp_call_cancels_it_on_the_server(connect, owner, model_server, record):
    await mcp_server(record, require_approval=False)
    model_server.enqueue(calls(("c1", "srv__slow", {"seconds": 60})), answer("never sent"))
    client = await connect(owner)
    await client.ask("wait a minute")
    events = await client.until("tool_call.running")
    await wait_for(lambda: "slow started" in record.read_text())
    await client.send(type="run.cancel", thread=events[0]["thread"])
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.cancelled"
    await wait_for(lambda: "cancelled" in record.read_text())


async def wait_for(check, timeout=20.0):
    import asyncio

    for _ in range(int(timeout / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within the time")


@pytest.mark.parametrize(
    ("action", "content", "said"), [("accept", {"name": "Ada"}, "hello Ada"), ("decline", None, "no name (decline)")]
)
async def test_an_mcp_servers_request_for_input_is_the_cards_form(
    connect, owner, model_server, record, action, content, said
):
    await mcp_server(record, require_approval=False)
    model_server.enqueue(calls(("c1", "srv__ask_name", {})), answer("Nice to meet you."))
    client = await connect(owner)
    await client.ask("greet me")
    asked = (await client.until("tool_call.input_requested"))[-1]
    assert asked["message"] == "What is your name?"
    assert list(asked["schema"]["properties"]) == ["name"]
    answer_frame = {"content": content} if content is not None else {}
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action=action, **answer_frame,
    )  # fmt: skip
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("success", said)
    assert events[-1]["type"] == "run.completed"


async def test_waiting_for_the_answer_does_not_count_against_the_servers_timeout(connect, owner, model_server, record):
    # A 1 s timeout, answered after 3 s (the connections fixture pings the server twice a second meanwhile); then a
    # later call of the same server asks again. Connected under 30 s first: the timeout bounds connecting too, and a
    # change of the timeout alone keeps the connection.
    await mcp_server(record, require_approval=False, timeout=30)
    row = await McpServer.objects.aget(name="srv")
    row.timeout = 1
    await row.asave()
    model_server.enqueue(
        calls(("c1", "srv__ask_name", {})), answer("Nice to meet you."),
        calls(("c2", "srv__ask_name", {})), answer("Again."),
    )  # fmt: skip
    client = await connect(owner)
    await client.ask("greet me")
    asked = (await client.until("tool_call.input_requested"))[-1]
    await asyncio.sleep(3)
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action="accept", content={"name": "Ada"},
    )  # fmt: skip
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("success", "hello Ada")

    await client.ask("once more", thread=asked["thread"])
    again = (await client.until("tool_call.input_requested"))[-1]
    assert again["message"] == "What is your name?" and again["tool_call"] != asked["tool_call"]
    await client.send(
        type="tool_call.input", thread=again["thread"], tool_call=again["tool_call"], request=again["request"],
        action="accept", content={"name": "Bob"},
    )  # fmt: skip
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("success", "hello Bob")


async def test_an_mcp_servers_progress_is_the_cards_status_line(connect, owner, model_server, record, settings):
    settings.AGENTWEB_PROGRESS_WINDOW = 0.001
    await mcp_server(record, require_approval=False)
    model_server.enqueue(calls(("c1", "srv__count", {"steps": 3})), answer("Counted."))
    client = await connect(owner)
    await client.ask("count to three")
    events = await client.run_to_end()
    progress = [e for e in events if e["type"] == "tool_call.progress"]
    assert progress and progress[-1]["total"] == 3 and progress[-1]["message"].startswith("step ")
    assert next(e for e in events if e["type"] == "tool_call.completed")["content"] == "counted to 3"
