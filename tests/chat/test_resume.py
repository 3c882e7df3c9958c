"""Nothing lost, nothing twice: reconnecting with after_seq, retrying, continuing, and runs a dead process left."""

import json
import random
import uuid

import pytest

from chat import live
from chat.models import Message, Run, Thread
from chat.runs import runs_here
from tests.support.model_server import ErrorResponse, ScriptedModelServer, SSEResponse, openai_sse_body

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("seed", range(6))
async def test_a_client_that_drops_and_resubscribes_misses_nothing_and_sees_nothing_twice(
    connect, owner, settings, seed
):
    settings.AGENTWEB_DEMO_DELAY = 0.002
    cut = random.Random(seed).randint(2, 20)  # the demo's turn sends 25 events: drop somewhere before its end
    first = await connect(owner)
    await first.ask("what is 23*19 and what time is it?")
    before = [await first.receive() for _ in range(cut)]
    await first.close()

    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=before[0]["thread"], after_seq=before[-1]["seq"])
    after = await second.run_to_end()

    everything = [json.loads(text) for text in await live.read_after(uuid.UUID(before[0]["thread"]), 0)]
    assert before + after == everything


async def test_a_subscriber_that_is_up_to_date_gets_nothing_old(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    events = await client.run_to_end()
    other = await connect(owner)
    await other.send(type="thread.subscribe", thread=events[0]["thread"], after_seq=events[-1]["seq"])
    await other.send(type="ping")
    assert await other.receive() == {"type": "pong"}


async def test_a_seq_this_server_never_gave_out_gets_a_snapshot(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    events = await client.run_to_end()
    other = await connect(owner)
    await other.send(type="thread.subscribe", thread=events[0]["thread"], after_seq=events[-1]["seq"] + 100)
    snapshot = await other.receive()
    assert (snapshot["type"], snapshot["seq"]) == ("thread.snapshot", events[-1]["seq"])


async def test_a_run_stopped_at_its_step_limit_can_continue(connect, owner, settings):
    settings.AGENTWEB_MAX_STEPS = 1
    client = await connect(owner)
    await client.ask("what is 23*19?")
    first = await client.run_to_end()
    assert first[-1]["reason"] == "max_steps"
    await client.send(type="run.continue", thread=first[0]["thread"], steps=3)
    more = await client.run_to_end()
    assert more[-1] == {**more[-1], "type": "run.completed", "reason": "done"}
    assert "437" in [e for e in more if e["type"] == "message.completed"][-1]["content"]


async def test_only_a_run_at_its_step_limit_can_continue(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    events = await client.run_to_end()
    await client.send(type="run.continue", thread=events[0]["thread"])
    assert (await client.receive())["code"] == "not_allowed"


async def test_a_failed_run_can_be_retried(connect, owner, settings):
    with ScriptedModelServer() as server:
        settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "api": "openai", "base_url": server.base_url, "model": "m"}
        server.enqueue(
            ErrorResponse(503, {"error": {"message": "warming up"}}), SSEResponse(openai_sse_body(text="Hi!"))
        )
        client = await connect(owner)
        await client.ask("hello")
        failed = await client.run_to_end()
        assert failed[-1]["type"] == "run.failed"
        await client.send(type="run.retry", thread=failed[0]["thread"])
        retried = await client.run_to_end()
    assert retried[-1]["type"] == "run.completed"
    assert [e["content"] for e in retried if e["type"] == "message.completed"] == ["Hi!"]
    # The model was asked the same question again, without the failed attempt in between.
    assert [m["role"] for m in server.requests[-1]["json"]["messages"]] == ["system", "user"]


async def leave_a_run_behind(owner) -> Thread:
    """What a server process killed in mid-answer leaves in the database."""
    thread = await Thread.objects.acreate(owner=owner, title="hello")
    run = await Run.objects.acreate(thread=thread, status="running")
    await Message.objects.acreate(thread=thread, run=run, order=1, role="user", content="hello")
    await Message.objects.acreate(thread=thread, run=run, order=2, role="assistant", content="Hal", status="streaming")
    return thread


async def test_a_run_left_by_a_dead_server_is_shown_interrupted_with_its_partial_text(connect, owner, monkeypatch):
    thread = await leave_a_run_behind(owner)
    monkeypatch.setattr(runs_here(), "recovered", False)
    client = await connect(owner)
    await client.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None)
    snapshot = await client.receive()
    assert snapshot["run"]["status"] == "interrupted"
    assert snapshot["messages"][1] == {**snapshot["messages"][1], "content": "Hal", "status": "error"}


async def test_an_interrupted_run_can_be_retried(connect, owner, monkeypatch):
    thread = await leave_a_run_behind(owner)
    monkeypatch.setattr(runs_here(), "recovered", False)
    client = await connect(owner)
    await client.send(type="run.retry", thread=str(thread.pk))
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert await Run.objects.filter(thread=thread).acount() == 2
