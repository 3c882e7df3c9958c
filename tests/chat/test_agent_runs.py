"""A thread's agent through the websocket, against the scripted model server: the request carries the agent's
prompt (filled in), only its tools and its sampling settings; its step limit and approval overrides hold; a tool
it does not have cannot run in its threads, whoever names it (docs/agents.md)."""

import uuid

import pytest
from django.utils import timezone

from agents.models import Agent
from chat.models import Message, Run, Thread, ToolCall, Usage
from modelconfig.models import ModelConfiguration
from tests.chat.test_runs_with_model_server import answer, calls

pytestmark = pytest.mark.django_db(transaction=True)


def make_agent(**fields) -> Agent:
    values = {"name": "Maths tutor", "slug": "maths", "description": "Sums, step by step."}
    values.update(fields)
    return Agent.objects.create(**values)


def offered(request) -> list[str]:
    return sorted(t["function"]["name"] for t in request["json"].get("tools", []))


async def new_thread(client, content="hi", **extra) -> tuple[str, list[dict]]:
    await client.ask(content, **extra)
    events = await client.run_to_end()
    created = next(e for e in events if e["type"] == "thread.created")
    return created["thread"], events


async def test_the_request_carries_the_agents_prompt_tools_and_sampling(connect, owner, model_server):
    await make_agent_async(
        system_prompt="You are {agent}, helping {user} on {date}. Keep {braces}.",
        all_tools=False,
        tools=["calculator"],
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=321,
    )
    model_server.enqueue(answer("4"))
    client = await connect(owner)
    _, events = await new_thread(client, "2+2?", agent="maths")
    assert events[-1]["type"] == "run.completed"
    [request] = model_server.requests
    body = request["json"]
    system = body["messages"][0]
    assert system["role"] == "system"
    today = timezone.localdate().isoformat()
    assert system["content"] == f"You are Maths tutor, helping owner on {today}. Keep {{braces}}."
    assert offered(request) == ["calculator"]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.9, 321)


async def test_a_thread_without_an_agent_is_as_before(connect, owner, model_server, settings):
    await make_agent_async(system_prompt="Not this one", all_tools=False, tools=["calculator"], temperature=0.1)
    model_server.enqueue(answer("hello"))
    client = await connect(owner)
    thread, events = await new_thread(client)
    assert next(e for e in events if e["type"] == "thread.created")["agent"] is None
    body = model_server.requests[0]["json"]
    assert body["messages"][0]["content"] == settings.AGENTWEB_SYSTEM_PROMPT
    assert "calculator" in offered(model_server.requests[0]) and "current_time" in offered(model_server.requests[0])
    assert "temperature" not in body and "top_p" not in body
    assert (await Run.objects.aget(thread_id=thread)).step_limit == settings.AGENTWEB_MAX_STEPS


async def test_the_default_agent_is_taken_by_a_new_thread_and_named_in_its_events(connect, owner, model_server):
    await make_agent_async(is_default=True, system_prompt="Default agent {agent}")
    model_server.enqueue(answer("hello"))
    client = await connect(owner)
    thread, events = await new_thread(client)
    assert next(e for e in events if e["type"] == "thread.created")["agent"] == {"slug": "maths", "name": "Maths tutor"}
    assert model_server.requests[0]["json"]["messages"][0]["content"] == "Default agent Maths tutor"
    await client.send(type="thread.subscribe", thread=thread, after_seq=None)
    snapshot = (await client.until("thread.snapshot"))[-1]
    assert snapshot["agent"] == {"slug": "maths", "name": "Maths tutor"}


async def test_an_agent_that_is_not_the_persons_to_pick_is_refused_and_nothing_is_written(
    connect,
    owner,
    stranger,
    model_server,
):
    await make_agent_async(owner_id=stranger.pk)
    client = await connect(owner)
    await client.ask("hi", agent="maths", ref="r1")
    error = await client.receive()
    assert (error["type"], error["code"], error["ref"]) == ("error", "not_found", "r1")
    assert not await Thread.objects.filter(owner=owner).aexists()
    await client.ask("hi", agent="no-such-agent")
    assert (await client.receive())["code"] == "not_found"


async def test_the_step_limit_holds(connect, owner, model_server):
    await make_agent_async(step_limit=2)
    model_server.enqueue(*[calls((f"c{i}", "calculator", {"expression": "1+1"})) for i in range(3)])
    client = await connect(owner)
    thread, events = await new_thread(client, agent="maths")
    assert events[-1] == {**events[-1], "type": "run.completed", "reason": "max_steps", "steps": 2}
    assert len(model_server.requests) == 2
    assert (await Run.objects.aget(thread_id=thread)).step_limit == 2


async def test_approval_overrides_hold(connect, owner, model_server, calculator_needs_approval):
    # The calculator asks everywhere, but not in this agent's threads; current_time never asks, but here it does.
    await make_agent_async(approvals={"calculator": "skip", "current_time": "require"})
    model_server.enqueue(calls(("c1", "calculator", {"expression": "2+3"}), ("c2", "current_time", {})), answer("done"))
    client = await connect(owner)
    await client.ask("both", agent="maths")
    events = await client.until("run.waiting")
    [awaiting] = [e for e in events if e["type"] == "tool_call.awaiting_approval"]
    started = {e["tool_call"]["id"]: e["tool_call"]["name"] for e in events if e["type"] == "tool_call.started"}
    assert started[awaiting["tool_call"]] == "current_time"
    done = [e for e in events if e["type"] == "tool_call.completed"]
    assert [(started[e["tool_call"]], e["status"], e["content"]) for e in done] == [("calculator", "success", "5")]


async def test_a_tool_the_agent_does_not_have_cannot_run_even_when_the_model_names_it(
    connect,
    owner,
    model_server,
    calculator_needs_approval,
):
    # Not offered, and a call the model makes anyway (with approval asked for it everywhere else) never runs nor
    # waits: its result says it is not available.
    await make_agent_async(all_tools=False, tools=["current_time"])
    model_server.enqueue(calls(("c1", "calculator", {"expression": "6*7"})), answer("could not"))
    client = await connect(owner)
    _, events = await new_thread(client, agent="maths")
    assert offered(model_server.requests[0]) == ["current_time"]
    assert not [e for e in events if e["type"] == "tool_call.awaiting_approval"]
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert completed["status"] == "error"
    assert completed["content"] == "Tool 'calculator' is not available to this agent."
    sent_back = [m for m in model_server.requests[1]["json"]["messages"] if m["role"] == "tool"]
    assert sent_back[0]["content"] == completed["content"]


async def test_a_decision_on_a_call_of_a_tool_the_agent_does_not_have_is_refused(connect, owner, model_server):
    # A waiting call the agent cannot run (written as a crafted history would have it): approving it changes nothing.
    agent = await make_agent_async(all_tools=False, tools=["current_time"])
    thread = await Thread.objects.acreate(owner=owner, title="t", agent=agent)
    run = await Run.objects.acreate(thread=thread, status=Run.Status.WAITING)
    step = await Message.objects.acreate(thread=thread, run=run, order=1, role="assistant")
    call = await ToolCall.objects.acreate(
        message=step,
        call_id="c1",
        name="calculator",
        args={"expression": "1+1"},
        status=ToolCall.Status.AWAITING_APPROVAL,
        approval={"approve": True, "edit": True, "reject": True, "respond": True},
    )
    client = await connect(owner)
    await client.send(type="tool_call.decide", tool_call=str(call.pk), decision="approve", ref="d1")
    error = await client.receive()
    assert (error["type"], error["code"], error["ref"]) == ("error", "not_allowed", "d1")
    assert "not available to this agent" in error["message"]
    await call.arefresh_from_db()
    assert call.status == ToolCall.Status.AWAITING_APPROVAL
    assert (await Run.objects.aget(pk=run.pk)).status == Run.Status.WAITING


async def test_the_agents_model_is_used_unless_the_person_picked_one(connect, owner, model_server):
    agents_model = await ModelConfiguration.objects.acreate(
        name="Agent's model", api="openai", base_url=model_server.base_url, model="agent-model"
    )
    picked = await ModelConfiguration.objects.acreate(
        name="Picked", api="openai", base_url=model_server.base_url, model="picked-model"
    )
    await make_agent_async(model_id=agents_model.pk)
    model_server.enqueue(answer("one"), answer("two"))
    client = await connect(owner)
    # The page sends its picker's "default" with a new thread's first message: not a pick of its own.
    await new_thread(client, agent="maths", model="default")
    await new_thread(client, agent="maths", model=str(picked.pk), client_msg_id=str(uuid.uuid4()))
    assert [r["json"]["model"] for r in model_server.requests] == ["agent-model", "picked-model"]


async def make_agent_async(**fields) -> Agent:
    from channels.db import database_sync_to_async

    return await database_sync_to_async(make_agent)(**fields)


async def test_continue_gives_the_agents_step_limit_again(connect, owner, model_server):
    await make_agent_async(step_limit=1)
    model_server.enqueue(calls(("c1", "calculator", {"expression": "1+1"})), answer("2"))
    client = await connect(owner)
    thread, events = await new_thread(client, agent="maths")
    assert events[-1]["reason"] == "max_steps"
    await client.send(type="run.continue", thread=thread)
    assert (await client.run_to_end())[-1]["reason"] == "done"
    assert [r.step_limit async for r in Run.objects.filter(thread_id=thread).order_by("id")] == [1, 1]


async def test_the_usage_of_an_agents_run_names_the_agent(connect, owner, model_server):
    await make_agent_async()
    model_server.enqueue(answer("4"))
    client = await connect(owner)
    thread, events = await new_thread(client, "2+2?", agent="maths")
    assert events[-1]["type"] == "run.completed"
    assert [row.agent async for row in Usage.objects.filter(thread_id=thread)] == ["maths"]


WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}


async def test_an_agents_response_schema_asks_for_a_structured_answer_and_stores_it(connect, owner, model_server):
    await make_agent_async(response_schema=WEATHER)
    model_server.enqueue(answer('{"city": "Paris", "celsius": 21}'))
    client = await connect(owner)
    _, events = await new_thread(client, "weather in Paris?", agent="maths")
    assert events[-1]["type"] == "run.completed"
    format_ = model_server.requests[0]["json"]["response_format"]
    assert (format_["type"], format_["json_schema"]["name"], format_["json_schema"]["schema"]) == (
        "json_schema",
        "maths",
        WEATHER,
    )
    stored = await Message.objects.filter(role="assistant").alast()
    assert stored.structured == {"city": "Paris", "celsius": 21}


async def test_an_agents_context_strategy_keeps_the_last_turns_only(connect, owner, model_server):
    await make_agent_async(context_strategy={"kind": "last_n", "last_n": 1})
    model_server.enqueue(answer("one"), answer("two"))
    client = await connect(owner)
    thread, _ = await new_thread(client, "first", agent="maths")
    await client.ask("second", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    sent = [m["content"] for m in model_server.requests[1]["json"]["messages"] if m["role"] == "user"]
    assert sent == ["second"]


def test_an_agent_with_a_broken_schema_or_strategy_is_refused():
    from django.core.exceptions import ValidationError

    agent = Agent(name="Bad", slug="bad", response_schema={"type": 12}, context_strategy={"kind": "last_n", "weeks": 2})
    with pytest.raises(ValidationError) as refused:
        agent.full_clean()
    assert set(refused.value.message_dict) >= {"response_schema", "context_strategy"}
