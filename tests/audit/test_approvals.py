"""Decisions on calls that wait for approval, as a person makes them: over the chat's websocket (the inbox sends the
same frame on the same socket: static/inbox/inbox.js) and through the run API. Recorded with who decided, which
decision, the tool and the thread; never the call's arguments or what the person wrote."""

import pytest
from channels.db import database_sync_to_async

from audit.models import Event
from tests.audit.conftest import everything_recorded

pytestmark = pytest.mark.django_db(transaction=True)


async def waiting_call(client):
    await client.ask("what is 23*19?")
    events = await client.until("run.waiting")
    return next(e for e in events if e["type"] == "tool_call.awaiting_approval")


async def decisions() -> list[Event]:
    return [e async for e in Event.objects.filter(action__startswith="approval.").order_by("id")]


async def test_an_approval_over_the_websocket_is_recorded(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    awaiting = await waiting_call(client)
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="approve")
    await client.run_to_end()
    [event] = await decisions()
    assert (event.action, event.actor_id, event.target_type) == ("approval.approve", owner.pk, "chat.toolcall")
    assert (event.target_id, event.target_label) == (awaiting["tool_call"], "calculator")
    assert event.detail["tool"] == "calculator" and event.detail["thread"] == awaiting["thread"]
    assert event.detail["via"] == "chat" and event.detail["for_thread"] is False


async def test_an_edit_and_a_rejection_keep_neither_arguments_nor_the_reason(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    awaiting = await waiting_call(client)
    await client.send(
        type="tool_call.decide", tool_call=awaiting["tool_call"], decision="edit", args={"expression": "7777+1"}
    )
    await client.run_to_end()
    awaiting = await waiting_call(client)
    await client.send(
        type="tool_call.decide", tool_call=awaiting["tool_call"], decision="reject", message="my pin is 4321"
    )
    await client.run_to_end()
    assert [e.action for e in await decisions()] == ["approval.edit", "approval.reject"]
    text = await database_sync_to_async(everything_recorded)()
    for secret in ("7777", "23*19", "4321"):
        assert secret not in text


async def test_a_refused_decision_is_not_recorded(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    awaiting = await waiting_call(client)
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="edit", args={"expr": 1})
    assert (await client.receive())["code"] == "invalid_args"
    assert await decisions() == []
