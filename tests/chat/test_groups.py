"""Groups govern what a person may use, on the chat's paths (docs/teams.md, Groups): a model configuration, an agent
and a tool kept for the research group are not in anyone else's page, Tools panel or runs; a frame that names one
anyway is refused as unknown, nothing written; a thread whose agent or model its person may no longer use starts no
run (a clear error, nothing written); an agent that lists a kept tool does not hand it to an outsider."""

import pytest
from asgiref.sync import sync_to_async
from django.test import Client as PageClient

from agents.models import Agent
from chat.models import Message, Run, Thread
from modelconfig.models import ModelConfiguration
from tests.chat.test_runs_with_model_server import answer, calls
from tools.models import ToolSetting
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db(transaction=True)


def kept_model(server, research) -> ModelConfiguration:
    row = ModelConfiguration.objects.create(
        name="Research model", api="openai", base_url=server.base_url, model="research-model", api_key="sk-x"
    )
    row.groups.add(research)
    return row


def kept_agent(research, **fields) -> Agent:
    agent = Agent.objects.create(slug="lab", name="Lab assistant", **fields)
    agent.groups.add(research)
    return agent


async def written(owner) -> tuple[int, int, int]:
    threads = await Thread.objects.filter(owner=owner).acount()
    messages = await Message.all_versions.filter(thread__owner=owner).acount()
    return threads, messages, await Run.objects.filter(thread__owner=owner).acount()


async def test_a_frame_naming_a_groups_model_or_agent_outside_it_is_unknown_and_writes_nothing(
    connect, owner, member, research, model_server
):
    row = await sync_to_async(kept_model)(model_server, research)
    await sync_to_async(kept_agent)(research)
    client = await connect(owner)
    await client.ask("hi", model=str(row.pk), ref="r1")
    error = await client.receive()
    assert (error["type"], error["code"], error["ref"]) == ("error", "not_found", "r1")
    await client.ask("hi", agent="lab", ref="r2")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("not_found", "r2")
    assert "lab" in error["message"]
    assert await written(owner) == (0, 0, 0)
    assert model_server.requests == []

    # The member's frames naming them run on them.
    model_server.enqueue(answer("from research"))
    theirs = await connect(member)
    await theirs.ask("hi", model=str(row.pk), agent="lab")
    events = await theirs.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert model_server.requests[0]["json"]["model"] == "research-model"
    assert next(e for e in events if e["type"] == "thread.created")["agent"] == {"slug": "lab", "name": "Lab assistant"}


async def test_set_model_to_a_groups_model_outside_it_is_unknown(connect, owner, research, model_server):
    row = await sync_to_async(kept_model)(model_server, research)
    model_server.enqueue(answer("one"))
    client = await connect(owner)
    await client.ask("first")
    thread = (await client.run_to_end())[0]["thread"]
    await client.send(type="thread.set_model", thread=thread, model=str(row.pk), ref="m1")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("not_found", "m1")
    assert (await Thread.objects.aget(pk=thread)).model_choice == ""


async def test_a_thread_whose_agent_its_person_left_starts_no_run_and_writes_nothing(
    connect, member, research, model_server
):
    await sync_to_async(kept_agent)(research)
    model_server.enqueue(answer("one"))
    client = await connect(member)
    await client.ask("first", agent="lab")
    thread = (await client.run_to_end())[0]["thread"]
    await sync_to_async(member.groups.remove)(research)
    before = await written(member)

    await client.ask("again", thread=thread, ref="s1")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("forbidden", "s1")
    assert error["message"] == "The agent 'Lab assistant' is not available to you; start a new chat with another agent."
    edit = {"type": "message.edit_last", "content": "edited", "client_msg_id": "6f1c8c3e-5b0e-4a8e-9d39-0d3c1f6a2b11"}
    for frame in ({"type": "run.regenerate"}, edit):
        await client.send(**frame, thread=thread, ref="f1")
        error = await client.receive()
        assert (error["type"], error["code"]) == ("error", "forbidden"), frame
    assert await written(member) == before
    assert len(model_server.requests) == 1


async def test_a_thread_on_a_model_its_person_left_starts_no_run(connect, member, research, model_server):
    row = await sync_to_async(kept_model)(model_server, research)
    model_server.enqueue(answer("one"))
    client = await connect(member)
    await client.ask("first", model=str(row.pk))
    thread = (await client.run_to_end())[0]["thread"]
    await sync_to_async(member.groups.remove)(research)
    before = await written(member)
    await client.ask("again", thread=thread, ref="s1")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("forbidden", "s1")
    assert "'Research model' is not available to you; pick another model" in error["message"]
    assert await written(member) == before


async def test_an_agent_listing_a_groups_tool_does_not_give_it_to_an_outsider(connect, owner, research, model_server):
    def setup():
        sync_tool_settings()
        ToolSetting.objects.get(name="calculator").groups.add(research)
        Agent.objects.create(slug="sums", name="Sums", all_tools=False, tools=["calculator", "current_time"])

    await sync_to_async(setup)()
    model_server.enqueue(calls(("c1", "calculator", {"expression": "6*7"})), answer("could not"))
    client = await connect(owner)
    await client.ask("6*7?", agent="sums")
    events = await client.run_to_end()
    offered = [t["function"]["name"] for t in model_server.requests[0]["json"]["tools"]]
    assert offered == ["current_time"]
    completed = next(e for e in events if e["type"] == "tool_call.completed")
    assert (completed["status"], completed["content"]) == ("error", "Tool 'calculator' is disabled.")


async def test_a_run_resumed_after_its_person_left_the_agents_group_fails_saying_why(
    connect, member, research, model_server, calculator_needs_approval
):
    await sync_to_async(kept_agent)(research)
    model_server.enqueue(calls(("c1", "calculator", {"expression": "1+1"})), answer("2"))
    client = await connect(member)
    await client.ask("1+1?", agent="lab")
    events = await client.until("run.waiting")
    thread = next(e["thread"] for e in events if e["type"] == "thread.created")
    call = next(e for e in events if e["type"] == "tool_call.awaiting_approval")["tool_call"]
    await sync_to_async(member.groups.remove)(research)
    await client.send(type="tool_call.decide", tool_call=call, decision="approve", ref="d1")
    events = await client.until("run.failed")
    assert (
        events[-1]["error"] == "The agent 'Lab assistant' is not available to you; start a new chat with another agent."
    )
    assert len(model_server.requests) == 1
    runs = await Run.objects.filter(thread__owner=member).acount()
    await client.send(type="run.retry", thread=thread, ref="t1")
    error = await client.receive()
    assert (error["type"], error["code"], error["ref"]) == ("error", "forbidden", "t1")
    assert await Run.objects.filter(thread__owner=member).acount() == runs


def page_of(user) -> str:
    client = PageClient()
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def tools_panel_of(user) -> set[str]:
    client = PageClient()
    client.force_login(user)
    return {item["name"] for item in client.get("/tools/available").json()["tools"]}


def test_the_page_and_the_tools_panel_show_the_groups_things_to_its_members_only(owner, member, research):
    ModelConfiguration.objects.create(name="Research model", api="demo").groups.add(research)
    kept_agent(research)
    sync_tool_settings()
    ToolSetting.objects.get(name="calculator").groups.add(research)
    theirs, mine = page_of(owner), page_of(member)
    assert "Research model" in mine and "Lab assistant" in mine
    assert "Research model" not in theirs and "Lab assistant" not in theirs
    assert "calculator" in tools_panel_of(member)
    assert "calculator" not in tools_panel_of(owner) and "current_time" in tools_panel_of(owner)


def test_the_tools_panel_for_a_groups_agent_is_not_found_outside_it(owner, member, research):
    kept_agent(research)
    client = PageClient()
    client.force_login(owner)
    outsider = client.get("/tools/available", {"agent": "lab"})
    client.force_login(member)
    inside = client.get("/tools/available", {"agent": "lab"})
    assert inside.status_code == 200
    assert outsider.status_code == 404
