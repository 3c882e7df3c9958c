"""Calls that wait for a person: approve, edit, reject, respond — exactly once, and waiting in the database."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from chat.models import Message, Run, ToolCall, ToolCallDecision
from tests.support.model_server import ScriptedModelServer, SSEResponse, anthropic_sse_body

pytestmark = pytest.mark.django_db(transaction=True)


async def wait_for_approval(client, question="what is 23*19?", thread=None):
    await client.ask(question, thread=thread)
    events = await client.until("run.waiting")
    awaiting = next(e for e in events if e["type"] == "tool_call.awaiting_approval")
    return events, awaiting


async def test_a_call_that_needs_approval_waits_with_its_choices(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    events, awaiting = await wait_for_approval(client)
    assert awaiting["allow"] == {"approve": True, "edit": True, "reject": True, "respond": True}
    assert events[-1]["tool_calls"] == [awaiting["tool_call"]]
    assert not [e for e in events if e["type"] == "tool_call.running"]
    assert (await Run.objects.aget()).status == "waiting"
    assert not await Message.objects.filter(role="tool").aexists()


async def test_approving_runs_the_call_and_the_run_goes_on(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="approve")
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("success", "437")
    assert "437" in [e for e in events if e["type"] == "message.completed"][-1]["content"]
    assert events[-1]["type"] == "run.completed"


async def test_an_edit_runs_the_new_arguments_and_keeps_the_original(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    await client.send(
        type="tool_call.decide", tool_call=awaiting["tool_call"], decision="edit", args={"expression": "2+2"}
    )
    events = await client.run_to_end()
    decided = next(e for e in events if e["type"] == "tool_call.decided")
    assert (decided["original_args"], decided["args"]) == ({"expression": "23*19"}, {"expression": "2+2"})
    assert next(e for e in events if e["type"] == "tool_call.completed")["content"] == "4"
    record = await ToolCallDecision.objects.aget()
    assert (record.decision, record.original_args, record.edited_args) == (
        "edit",
        {"expression": "23*19"},
        {"expression": "2+2"},
    )


async def test_edited_arguments_that_do_not_fit_the_schema_change_nothing(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="edit", args={"expr": 1})
    error = await client.receive()
    assert error["code"] == "invalid_args"
    assert "expression" in error["message"]
    call = await ToolCall.objects.aget()
    assert (call.status, call.args) == ("awaiting_approval", {"expression": "23*19"})


async def test_a_rejection_tells_the_model_with_the_reason_and_never_runs_the_tool(
    connect, owner, calculator_needs_approval
):
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="reject", message="not needed")
    events = await client.run_to_end()
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert completed["status"] == "rejected"
    assert "declined" in completed["content"] and "not needed" in completed["content"]
    assert not [e for e in events if e["type"] == "tool_call.running"]
    tool_message = await Message.objects.aget(role="tool")
    assert tool_message.content == completed["content"]
    assert events[-1]["type"] == "run.completed"


async def test_a_reply_instead_of_a_result_reaches_the_model(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    await client.send(
        type="tool_call.decide", tool_call=awaiting["tool_call"], decision="respond", message="it is 437, trust me"
    )
    events = await client.run_to_end()
    assert "it is 437, trust me" in (await Message.objects.aget(role="tool")).content
    assert events[-1]["type"] == "run.completed"


async def test_two_tabs_deciding_at_once_run_the_tool_once(connect, owner, calculator_needs_approval):
    first = await connect(owner)
    _, awaiting = await wait_for_approval(first)
    second = await connect(owner)
    frame = {"type": "tool_call.decide", "tool_call": awaiting["tool_call"], "decision": "approve"}
    await asyncio.gather(first.send(**frame), second.send(**frame))
    answers = [await second.receive(), *await first.run_to_end()]
    assert [e["code"] for e in answers if e["type"] == "error"] == ["already_decided"]
    assert await Message.objects.filter(role="tool").acount() == 1
    assert await ToolCallDecision.objects.acount() == 1


async def test_a_replayed_decision_after_the_run_is_refused(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    frame = {"type": "tool_call.decide", "tool_call": awaiting["tool_call"], "decision": "approve"}
    await client.send(**frame)
    await client.run_to_end()
    await client.send(**frame)
    assert (await client.receive())["code"] == "already_decided"
    assert await Message.objects.filter(role="tool").acount() == 1


async def test_stop_cancels_a_waiting_run_and_a_later_decision_is_refused(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    events, awaiting = await wait_for_approval(client)
    await client.send(type="run.cancel", thread=events[0]["thread"])
    cancelled = await client.run_to_end()
    assert [(e["type"], e.get("status")) for e in cancelled] == [
        ("tool_call.completed", "cancelled"),
        ("run.cancelled", None),
    ]
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="approve")
    assert (await client.receive())["code"] == "already_decided"
    assert (await Run.objects.aget()).status == "cancelled"


async def test_a_new_tab_sees_the_waiting_call_and_its_choices(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    events, awaiting = await wait_for_approval(client)
    other = await connect(owner)
    await other.send(type="thread.subscribe", thread=events[0]["thread"], after_seq=None)
    snapshot = await other.receive()
    call = snapshot["messages"][1]["tool_calls"][0]
    assert (call["id"], call["status"], call["allow"]["edit"]) == (awaiting["tool_call"], "awaiting_approval", True)
    assert snapshot["run"]["status"] == "waiting"


async def test_a_new_message_while_a_call_waits_is_refused(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    events, _ = await wait_for_approval(client)
    await client.ask("hello?", thread=events[0]["thread"])
    assert (await client.receive())["code"] == "run_active"


async def test_approve_for_the_thread_lets_later_calls_of_that_tool_run_at_once(
    connect, owner, calculator_needs_approval
):
    client = await connect(owner)
    events, awaiting = await wait_for_approval(client)
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="approve", for_thread=True)
    await client.run_to_end()
    await client.ask("what is 6*7?", thread=events[0]["thread"])
    later = await client.run_to_end()
    assert not [e for e in later if e["type"] == "tool_call.awaiting_approval"]
    assert next(e for e in later if e["type"] == "tool_call.completed")["content"] == "42"


async def test_a_decision_on_someone_elses_call_is_not_found(connect, owner, stranger, calculator_needs_approval):
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    intruder = await connect(stranger)
    await intruder.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="approve")
    assert (await intruder.receive())["code"] == "not_found"
    assert (await ToolCall.objects.aget()).status == "awaiting_approval"


async def test_a_choice_that_is_not_offered_is_refused(connect, owner, calculator_needs_approval):
    calculator_needs_approval.allow_edit = False
    await calculator_needs_approval.asave()
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    assert awaiting["allow"]["edit"] is False
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="edit", args={})
    assert (await client.receive())["code"] == "bad_frame"


async def test_an_admin_rule_on_argument_values_asks_only_for_the_values_it_names(connect, owner):
    from tools.models import ApprovalRule
    from tools.services import sync_tool_settings

    await sync_to_async(sync_tool_settings)()
    await ApprovalRule.objects.acreate(
        tool_name="calculator", argument="expression", match="regex", pattern=r".*\*.*", action="ask"
    )
    client = await connect(owner)
    await client.ask("what is 2+2?")
    plain = await client.run_to_end()
    assert not [e for e in plain if e["type"] == "tool_call.awaiting_approval"]
    await client.ask("what is 23*19?", thread=plain[0]["thread"])
    waiting = await client.until("run.waiting")
    assert [e for e in waiting if e["type"] == "tool_call.awaiting_approval"]


async def test_a_page_loaded_later_shows_who_decided_and_why(connect, owner, calculator_needs_approval):
    client = await connect(owner)
    events, awaiting = await wait_for_approval(client)
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="reject", message="too costly")
    await client.run_to_end()
    later = await connect(owner)
    await later.send(type="thread.subscribe", thread=events[0]["thread"], after_seq=None)
    call = (await later.receive())["messages"][1]["tool_calls"][0]
    assert call["decision"] == {**call["decision"], "decision": "reject", "by": "owner", "message": "too costly"}


@pytest.fixture
def anthropic_server(settings):
    """A real local server speaking the Anthropic Messages API, which marks a tool result that is an error."""
    with ScriptedModelServer() as server:
        settings.AGENTWEB_LLM = {
            "api": "anthropic",
            "base_url": server.root_url,
            "model": "test-model",
            "api_key": "sk-test-key",
            "tool_protocol": "native",
        }
        yield server


def anthropic_call(call_id, expression):
    tool_calls = [{"id": call_id, "name": "calculator", "arguments": {"expression": expression}}]
    return SSEResponse(anthropic_sse_body(tool_calls=tool_calls))


def tool_results(request):
    return [
        block
        for message in request["json"]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


async def test_a_reply_shows_as_replied_and_reaches_the_model_as_the_users_reply_not_an_error(
    connect, owner, calculator_needs_approval, anthropic_server
):
    anthropic_server.enqueue(anthropic_call("toolu_1", "23*19"), SSEResponse(anthropic_sse_body(text="Noted.")))
    client = await connect(owner)
    _, awaiting = await wait_for_approval(client)
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="respond", message="437")
    events = await client.run_to_end()
    assert [e["status"] for e in events if e["type"] == "tool_call.completed"] == ["replied"]
    assert events[-1]["type"] == "run.completed"
    [result] = tool_results(anthropic_server.requests[1])
    assert "437" in str(result["content"])
    assert not result.get("is_error")
    assert (await ToolCall.objects.aget()).status == "replied"


async def test_retry_after_stop_at_an_approval_asks_again_and_the_model_gets_the_real_result(
    connect, owner, calculator_needs_approval, anthropic_server
):
    anthropic_server.enqueue(anthropic_call("toolu_1", "23*19"), SSEResponse(anthropic_sse_body(text="It is 437.")))
    client = await connect(owner)
    events, awaiting = await wait_for_approval(client)
    thread = events[0]["thread"]
    await client.send(type="run.cancel", thread=thread)
    await client.run_to_end()
    await client.send(type="run.retry", thread=thread)
    asked = await client.until("run.waiting", "run.completed", "run.failed", "run.cancelled")
    assert asked[-1]["type"] == "run.waiting"
    assert [(e["tool_call"], e["allow"]["approve"]) for e in asked if e["type"] == "tool_call.awaiting_approval"] == [
        (awaiting["tool_call"], True)
    ]
    assert len(anthropic_server.requests) == 1  # asked again, not answered by the model with "cancelled"
    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="approve")
    events = await client.run_to_end()
    assert [(e["status"], e["content"]) for e in events if e["type"] == "tool_call.completed"] == [("success", "437")]
    assert events[-1]["type"] == "run.completed"
    assert [r["content"] for r in tool_results(anthropic_server.requests[1])] == ["437"]
