# ruff: noqa: F811  (the fixtures imported below are the tests' parameters)
"""Tools turned off for one chat, through the websocket (docs/ui.md "The Tools panel", docs/protocol.md
`thread.set_tool`): stored with the thread, told to its other tabs, in its snapshot; never offered to the model, and a
call of one anyway (with approval asked for it elsewhere) is an error result that never runs; with an agent's tools
and MCP tools; refused for a name that is not a tool, another person's thread, or while a run is active."""

import uuid

import pytest
from asgiref.sync import sync_to_async

from agents.models import Agent
from chat.models import Message, Run, Thread
from tests.chat.test_runs_with_model_server import answer, calls, tool_messages
from tests.mcpservers.conftest import connections, record, stdio_row, wait_connected  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

TURNED_OFF = "Tool 'calculator' is turned off for this chat."


def offered(request) -> list[str]:
    return sorted(t["function"]["name"] for t in request["json"].get("tools", []))


async def first_turn(client, model_server, content="hi", **extra) -> str:
    model_server.enqueue(answer("hello"))
    await client.ask(content, **extra)
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    return next(e for e in events if e["type"] == "thread.created")["thread"]


async def test_turning_a_tool_off_is_stored_told_to_the_other_tabs_and_in_the_snapshot(connect, owner, model_server):
    client = await connect(owner)
    thread = await first_turn(client, model_server)
    other_tab = await connect(owner)
    await other_tab.send(type="thread.subscribe", thread=thread, after_seq=None)
    await other_tab.until("thread.snapshot")

    await client.send(type="thread.set_tool", thread=thread, tool="calculator", enabled=False)
    for tab in (client, other_tab):
        changed = await tab.until("thread.tools_changed")
        assert changed[-1]["disabled_tools"] == ["calculator"]
        assert changed[-1]["thread"] == thread and isinstance(changed[-1]["seq"], int)
    assert (await Thread.objects.aget(pk=thread)).disabled_tools == ["calculator"]

    await other_tab.send(type="thread.subscribe", thread=thread, after_seq=None)
    snapshot = (await other_tab.until("thread.snapshot"))[-1]
    assert snapshot["disabled_tools"] == ["calculator"]

    await client.send(type="thread.set_tool", thread=thread, tool="calculator", enabled=True)
    assert (await client.until("thread.tools_changed"))[-1]["disabled_tools"] == []


async def test_a_tool_turned_off_is_not_offered_and_a_call_of_it_never_runs_nor_waits(
    connect, owner, model_server, calculator_needs_approval
):
    client = await connect(owner)
    thread = await first_turn(client, model_server)
    await client.send(type="thread.set_tool", thread=thread, tool="calculator", enabled=False)
    await client.until("thread.tools_changed")

    # A text protocol's model may name a tool it was not offered: the call gets an error result and never runs.
    model_server.enqueue(calls(("c1", "calculator", {"expression": "6*7"})), answer("could not"))
    await client.ask("6*7?", thread=thread)
    events = await client.run_to_end()
    assert "calculator" not in offered(model_server.requests[1])
    assert "current_time" in offered(model_server.requests[1])
    assert not [e for e in events if e["type"] == "tool_call.awaiting_approval"]
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("error", TURNED_OFF)
    assert tool_messages(model_server.requests[2])[0]["content"] == TURNED_OFF
    assert events[-1]["type"] == "run.completed"


async def test_a_new_chat_starts_with_the_tools_its_first_message_turns_off(connect, owner, model_server):
    client = await connect(owner)
    thread = await first_turn(client, model_server, disabled_tools=["calculator", "current_time"])
    assert (await Thread.objects.aget(pk=thread)).disabled_tools == ["calculator", "current_time"]
    assert not {"calculator", "current_time"} & set(offered(model_server.requests[0]))
    await client.send(type="thread.subscribe", thread=thread, after_seq=None)
    assert (await client.until("thread.snapshot"))[-1]["disabled_tools"] == ["calculator", "current_time"]


async def test_an_unknown_tool_name_is_refused_and_nothing_changes(connect, owner, model_server):
    client = await connect(owner)
    thread = await first_turn(client, model_server)
    await client.send(type="thread.set_tool", thread=thread, tool="rm_rf", enabled=False, ref="t1")
    error = await client.receive()
    assert (error["type"], error["code"], error["ref"]) == ("error", "unknown_tool", "t1")
    assert "'rm_rf' is not a tool you can use" in error["message"]
    assert (await Thread.objects.aget(pk=thread)).disabled_tools == []

    # The same with a new chat's first message: no thread, no message.
    await client.ask("hi", disabled_tools=["calculator", "rm_rf"], ref="t2")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("unknown_tool", "t2")
    assert await Thread.objects.filter(owner=owner).acount() == 1


async def test_another_persons_thread_is_not_found(connect, owner, stranger, model_server):
    thread = await first_turn(await connect(owner), model_server)
    intruder = await connect(stranger)
    await intruder.send(type="thread.set_tool", thread=thread, tool="calculator", enabled=False, ref="x")
    error = await intruder.receive()
    assert (error["code"], error["ref"]) == ("not_found", "x")
    assert (await Thread.objects.aget(pk=thread)).disabled_tools == []


async def test_a_change_while_a_run_is_active_is_refused(connect, owner):
    thread = await Thread.objects.acreate(owner=owner, title="t")
    await Run.objects.acreate(thread=thread, status=Run.Status.WAITING)
    client = await connect(owner)
    await client.send(type="thread.set_tool", thread=str(thread.pk), tool="calculator", enabled=False, ref="r")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("run_active", "r")
    assert (await Thread.objects.aget(pk=thread.pk)).disabled_tools == []


async def test_with_an_agent_the_model_is_offered_the_agents_tools_less_those_turned_off(connect, owner, model_server):
    await sync_to_async(Agent.objects.create)(
        slug="maths", name="Maths", all_tools=False, tools=["calculator", "current_time"]
    )
    client = await connect(owner)
    await first_turn(client, model_server, agent="maths", disabled_tools=["calculator"])
    assert offered(model_server.requests[0]) == ["current_time"]


async def test_an_mcp_tool_can_be_turned_off(connect, owner, model_server, record):
    await sync_to_async(stdio_row)(record, require_approval=False)
    await sync_to_async(wait_connected)()
    client = await connect(owner)
    thread = await first_turn(client, model_server)
    assert "srv__add" in offered(model_server.requests[0])
    await client.send(type="thread.set_tool", thread=thread, tool="srv__add", enabled=False)
    await client.until("thread.tools_changed")

    model_server.enqueue(calls(("c1", "srv__add", {"a": 1, "b": 2})), answer("no"))
    await client.ask("1+2 with the server", thread=thread, client_msg_id=str(uuid.uuid4()))
    events = await client.run_to_end()
    assert "srv__add" not in offered(model_server.requests[1])
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("error", "Tool 'srv__add' is turned off for this chat.")
    assert not await Message.objects.filter(role="tool", content="3.0").aexists()


async def test_a_frame_without_a_boolean_enabled_is_a_bad_frame(connect, owner):
    thread = await Thread.objects.acreate(owner=owner, title="t")
    client = await connect(owner)
    await client.send(type="thread.set_tool", thread=str(thread.pk), tool="calculator", enabled="no", ref="b")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("bad_frame", "b")
    assert "enabled" in error["message"]


async def test_an_existing_threads_message_does_not_change_its_tools(connect, owner, model_server):
    client = await connect(owner)
    thread = await first_turn(client, model_server)
    model_server.enqueue(answer("again"))
    await client.ask("more", thread=thread, disabled_tools=["calculator"])
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    assert (await Thread.objects.aget(pk=thread)).disabled_tools == []
    assert "calculator" in offered(model_server.requests[1])
