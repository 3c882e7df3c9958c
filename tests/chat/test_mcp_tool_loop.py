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


async def test_two_calls_that_ask_at_once_get_a_form_each_and_waiting_counts_against_neither(
    connect, owner, model_server, record
):
    # The model calls the asking tool twice in one step: both calls are in flight on the server at once, and the
    # protocol does not say which call a question belongs to. Before, both forms went to the first card, and the
    # second call timed out while its question was open. A 1 s timeout, answered after 3 s.
    await mcp_server(record, require_approval=False, timeout=30)
    row = await McpServer.objects.aget(name="srv")
    row.timeout = 1
    await row.asave()
    model_server.enqueue(calls(("c1", "srv__ask_name", {}), ("c2", "srv__ask_name", {})), answer("Hello both."))
    client = await connect(owner)
    await client.ask("greet us")
    first = (await client.until("tool_call.input_requested"))[-1]
    second = (await client.until("tool_call.input_requested", "tool_call.completed"))[-1]
    assert second["type"] == "tool_call.input_requested" and second["tool_call"] != first["tool_call"]
    await asyncio.sleep(3)
    for asked, name in ((first, "Ada"), (second, "Bob")):
        await client.send(
            type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
            action="accept", content={"name": name},
        )  # fmt: skip
    events = await client.run_to_end()
    completed = [e for e in events if e["type"] == "tool_call.completed"]
    results = sorted((e["status"], e["content"]) for e in completed)
    assert results == [("success", "hello Ada"), ("success", "hello Bob")]
    assert events[-1]["type"] == "run.completed"


async def test_a_question_shown_on_another_calls_card_moves_when_that_call_ends_and_waiting_counts_against_neither(
    connect, owner, model_server, record
):
    # A slow call of the server is in flight when another call's tool asks. The protocol does not say which call
    # the question belongs to: the form is on the older card first (docs/mcp.md), moves to the other card when the
    # slow call has its result, and neither call's timeout counts while it is open (1 s here, answered after 3 s).
    # Before, the call that asked timed out after the server's timeout while the form was open on the other card.
    await mcp_server(record, require_approval=False, timeout=30)
    row = await McpServer.objects.aget(name="srv")
    row.timeout = 1
    await row.asave()
    model_server.enqueue(calls(("c1", "srv__slow", {"seconds": 2}), ("c2", "srv__ask_name", {})), answer("Done."))
    client = await connect(owner)
    await client.ask("wait, then greet me")
    events = await client.until("tool_call.input_requested")
    cards = [e["tool_call"] for e in events if e["type"] == "tool_call.running"]
    assert events[-1]["tool_call"] == cards[0]
    events = await client.until("tool_call.completed")
    assert (events[-1]["tool_call"], events[-1]["content"]) == (cards[0], "done waiting")
    closed = [e for e in events if e["type"] == "tool_call.input_answered"]
    assert [(e["tool_call"], e["action"]) for e in closed] == [(cards[0], "cancel")]
    asked = [e for e in events if e["type"] == "tool_call.input_requested"]  # it may move before the card completes
    moved = (asked or await client.until("tool_call.input_requested"))[-1]
    assert moved["tool_call"] == cards[1] and moved["message"] == "What is your name?"
    await asyncio.sleep(1.5)
    await client.send(
        type="tool_call.input", thread=moved["thread"], tool_call=moved["tool_call"], request=moved["request"],
        action="accept", content={"name": "Ada"},
    )  # fmt: skip
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["tool_call"], completed["status"], completed["content"]) == (cards[1], "success", "hello Ada")


async def test_stop_while_a_question_is_open_keeps_the_server_connected_and_the_next_call_asks(
    connect, owner, model_server, record, connections
):
    # Before, the question withdrawn by Stop ended the SDK's handler with a cancellation that took the whole
    # session down: the connection was lost, and the next calls failed without asking anything.
    await mcp_server(record, require_approval=False)
    connected_since = connections.state("srv").since
    model_server.enqueue(calls(("c1", "srv__ask_name", {})), calls(("c2", "srv__ask_name", {})), answer("Hello."))
    client = await connect(owner)
    await client.ask("greet me")
    asked = (await client.until("tool_call.input_requested"))[-1]
    await client.send(type="run.cancel", thread=asked["thread"])
    assert (await client.run_to_end())[-1]["type"] == "run.cancelled"
    await asyncio.sleep(1)  # the connection's pings (twice a second here) would notice a lost session meanwhile

    await client.ask("once more", thread=asked["thread"])
    again = (await client.until("tool_call.input_requested", "tool_call.completed"))[-1]
    assert again["type"] == "tool_call.input_requested" and again["tool_call"] != asked["tool_call"]
    await client.send(
        type="tool_call.input", thread=again["thread"], tool_call=again["tool_call"], request=again["request"],
        action="accept", content={"name": "Ada"},
    )  # fmt: skip
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("success", "hello Ada")
    state = connections.state("srv")
    assert (state.status, state.since) == ("connected", connected_since)


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
