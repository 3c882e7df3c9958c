"""The inbox is told over the socket when a call starts or stops waiting, or a request for input opens or closes,
in any of the person's threads: the sockets that asked for it (inbox.subscribe) and no one else's."""

import pytest
from asgiref.sync import sync_to_async
from django.test import Client as HttpClient

from chat.models import ToolCall
from tests.chat.test_runs_with_model_server import answer, calls
from tools.models import bump_settings_stamp
from tools.registry import default_registry
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = {"name": "Ada", "email": "ada@example.org", "age": 36, "colour": "g", "newsletter": True}


async def inbox_socket(connect, user):
    client = await connect(user)
    await client.send(type="inbox.subscribe")
    return client


async def next_change(client) -> dict:
    return (await client.until("inbox.changed"))[-1]


async def items_of(user) -> dict:
    def read():
        http = HttpClient()
        http.force_login(user)
        return http.get("/inbox/items").json()

    return await sync_to_async(read)()


async def test_a_waiting_call_and_its_decision_reach_the_inbox_and_no_one_elses(
    connect, owner, stranger, calculator_needs_approval
):
    writer = await connect(owner)
    inbox, unsubscribed, someone_else = (
        await inbox_socket(connect, owner),
        await connect(owner),
        await inbox_socket(connect, stranger),
    )

    await writer.ask("what is 23*19?")
    events = await writer.until("run.waiting")
    call = events[-1]["tool_calls"][0]
    changed = await next_change(inbox)
    assert changed == {
        "type": "inbox.changed",
        "thread": events[0]["thread"],
        "change": "waiting",
        "tool_calls": [call],
        "decision": None,
        "by": None,
    }
    assert (await items_of(owner))["count"] == 1

    await inbox.send(type="tool_call.decide", tool_call=call, decision="approve", ref="r1")
    decided = await next_change(inbox)
    assert (decided["change"], decided["tool_calls"], decided["decision"], decided["by"]) == (
        "decided",
        [call],
        "approve",
        "owner",
    )
    assert (await writer.run_to_end())[-1]["type"] == "run.completed"
    assert (await items_of(owner))["count"] == 0

    # The second decision (from the thread's tab) loses, and says so.
    await writer.send(type="tool_call.decide", tool_call=call, decision="reject", ref="r2")
    refused = await writer.until("error")
    assert (refused[-1]["code"], refused[-1]["ref"]) == ("already_decided", "r2")
    assert (await ToolCall.objects.aget(pk=call)).status == "success"

    assert "inbox.changed" not in [e["type"] for e in await drain(unsubscribed)]
    assert await drain(someone_else) == []


async def drain(client) -> list[dict]:
    got = []
    while not await client.communicator.receive_nothing(timeout=0.3):
        got.append(await client.receive())
    return got


async def test_a_stop_while_a_call_waits_empties_the_inbox(connect, owner, calculator_needs_approval):
    writer, inbox = await connect(owner), await inbox_socket(connect, owner)
    await writer.ask("what is 23*19?")
    events = await writer.until("run.waiting")
    assert (await next_change(inbox))["change"] == "waiting"
    await writer.send(type="run.cancel", thread=events[0]["thread"])
    cancelled = await next_change(inbox)
    assert (cancelled["change"], cancelled["tool_calls"]) == ("cancelled", events[-1]["tool_calls"])
    assert (await items_of(owner))["count"] == 0


@pytest.fixture
def tools_for_tests(settings, db):
    settings.AGENTWEB_TOOL_MODULES = ["tests.support.tools_for_tests"]
    default_registry.cache_clear()
    sync_tool_settings()
    bump_settings_stamp()
    yield
    default_registry.cache_clear()


async def test_an_open_request_for_input_is_in_the_inbox_until_answered_there(
    connect, owner, stranger, model_server, tools_for_tests
):
    model_server.enqueue(calls(("c1", "ask_for_details", {"purpose": "the newsletter"})), answer("Thanks."))
    writer, inbox = await connect(owner), await inbox_socket(connect, owner)
    await writer.ask("sign me up")
    requested = (await writer.until("tool_call.input_requested"))[-1]
    changed = await next_change(inbox)
    assert (changed["change"], changed["tool_calls"]) == ("input_requested", [requested["tool_call"]])

    [item] = (await items_of(owner))["items"]
    assert (item["kind"], item["request"], item["tool"], item["message"]) == (
        "input",
        requested["request"],
        "ask_for_details",
        requested["message"],
    )
    assert item["schema"] == requested["schema"]
    assert (await items_of(stranger))["items"] == []

    await inbox.send(
        type="tool_call.input",
        thread=changed["thread"],
        tool_call=requested["tool_call"],
        request=requested["request"],
        action="accept",
        content=GOOD,
    )
    closed = await next_change(inbox)
    assert (closed["change"], closed["decision"], closed["by"]) == ("input_closed", "accept", "owner")
    assert (await writer.run_to_end())[-1]["type"] == "run.completed"
    assert (await items_of(owner))["items"] == []
