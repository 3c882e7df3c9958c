"""A thread remembers its model: picked with the first message or later, used by its runs, never leaking a key;
and the context budget trims what a run sends to a model with a small window."""

import json

import pytest
from channels.db import database_sync_to_async
from django.test import Client as PageClient
from django.urls import reverse

from chat.agent import RegistryToolbox
from chat.models import Message, Run, Thread
from chat.runs import load_toolset
from modelconfig.models import ModelConfiguration
from providers.budget import estimate, estimate_tools
from providers.types import ChatMessage
from tests.support.model_server import ScriptedModelServer, SSEResponse, openai_sse_body

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-thread-model-secret-1234"


@pytest.fixture
def model_server():
    with ScriptedModelServer() as server:
        yield server


def answer(text="ok"):
    return SSEResponse(openai_sse_body(text=text))


async def row(server, name="Qwen", model="qwen3", **fields):
    values = {"api": "openai", "base_url": server.base_url, "model": model, "api_key": KEY, **fields}
    return await ModelConfiguration.objects.acreate(name=name, **values)


async def test_a_new_thread_runs_on_the_model_sent_with_its_first_message(connect, owner, model_server):
    qwen = await row(model_server, max_output_tokens=700, temperature=0.4)
    model_server.enqueue(answer("Hello from qwen"))
    client = await connect(owner)
    await client.ask("hello", model=str(qwen.pk))
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"

    sent = model_server.requests[0]
    assert sent["json"]["model"] == "qwen3"
    assert (sent["json"]["max_tokens"], sent["json"]["temperature"]) == (700, 0.4)
    assert sent["headers"]["Authorization"] == f"Bearer {KEY}"
    thread = await Thread.objects.aget()
    assert thread.model_choice == str(qwen.pk)
    assert (await Run.objects.aget()).model_label == "Qwen"
    assert KEY not in json.dumps(events)

    await client.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None)
    snapshot = await client.receive()
    assert snapshot["model"] == {
        "id": str(qwen.pk),
        "name": "Qwen",
        "label": "Qwen",
        "is_demo": False,
        "help": "",
        "context_window": 8192,
        "supports_images": False,
    }


async def test_set_model_changes_the_thread_for_every_tab_and_the_next_run_uses_it(connect, owner, model_server):
    qwen = await row(model_server)
    llama = await row(model_server, name="Llama", model="llama3.3")
    model_server.enqueue(answer("one"), answer("two"))
    client = await connect(owner)
    await client.ask("first", model=str(qwen.pk))
    thread = (await client.run_to_end())[0]["thread"]
    other = await connect(owner)
    await other.send(type="thread.subscribe", thread=thread, after_seq=None)
    assert (await other.receive())["type"] == "thread.snapshot"

    await client.send(type="thread.set_model", thread=thread, model=str(llama.pk))
    for tab in (client, other):
        changed = await tab.receive()
        assert changed["type"] == "thread.model_changed"
        assert changed["thread"] == thread
        assert changed["model"] == {"id": str(llama.pk), "label": "Llama", "is_demo": False, "context_window": 8192}
    assert (await Thread.objects.aget()).model_choice == str(llama.pk)

    await client.ask("second", thread=thread)
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert [r["json"]["model"] for r in model_server.requests] == ["qwen3", "llama3.3"]
    assert [run.model_label async for run in Run.objects.order_by("id")] == ["Qwen", "Llama"]

    # The change is numbered with the thread's events: a snapshot taken now is as new as the last event.
    await other.send(type="thread.subscribe", thread=thread, after_seq=None)
    snapshot = await other.until("thread.snapshot")
    assert snapshot[-1]["model"]["id"] == str(llama.pk)


async def test_an_unknown_or_disabled_model_is_refused_and_nothing_is_written(connect, owner, model_server):
    off = await row(model_server, name="Off", enabled=False)
    client = await connect(owner)
    for bad in ("999", str(off.pk), "gpt-5"):
        await client.ask("hello", model=bad, ref="r1")
        error = await client.receive()
        assert (error["type"], error["code"], error["ref"]) == ("error", "not_found", "r1")
        assert "not a model you can pick" in error["message"]
    assert await Thread.objects.acount() == 0
    assert await Message.objects.acount() == 0

    await client.ask("hello")  # the demo model, from the environment
    thread = (await client.run_to_end())[0]["thread"]
    await client.send(type="thread.set_model", thread=thread, model=str(off.pk), ref="r2")
    error = await client.receive()
    assert (error["code"], error["ref"]) == ("not_found", "r2")
    assert (await Thread.objects.aget()).model_choice == ""
    await client.send(type="thread.set_model", thread=thread, model="", ref="r3")
    assert (await client.receive())["code"] == "bad_frame"


async def test_set_model_on_someone_elses_thread_is_not_found(connect, owner, stranger, model_server):
    qwen = await row(model_server)
    client = await connect(owner)
    await client.ask("hello")
    thread = (await client.run_to_end())[0]["thread"]
    intruder = await connect(stranger)
    await intruder.send(type="thread.set_model", thread=thread, model=str(qwen.pk))
    assert (await intruder.receive())["code"] == "not_found"
    assert (await Thread.objects.aget()).model_choice == ""


async def test_a_thread_without_a_choice_follows_the_default_configuration(connect, owner, model_server):
    await row(model_server, name="Default", model="default-model", is_default=True)
    model_server.enqueue(answer())
    client = await connect(owner)
    await client.ask("hello")
    await client.run_to_end()
    assert model_server.requests[0]["json"]["model"] == "default-model"


async def test_a_thread_whose_model_was_disabled_falls_back_to_the_default(connect, owner, model_server):
    qwen = await row(model_server)
    model_server.enqueue(answer())
    client = await connect(owner)
    await client.ask("hello", model=str(qwen.pk))
    thread = (await client.run_to_end())[0]["thread"]
    await ModelConfiguration.objects.filter(pk=qwen.pk).aupdate(enabled=False)
    await client.ask("again", thread=thread)
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"  # the demo model of the environment answered
    assert len(model_server.requests) == 1
    assert (await Run.objects.order_by("-id").afirst()).model_label.startswith("Demo model")


# --- the page ---------------------------------------------------------------------------------


def page_for(user, thread=None):
    client = PageClient()
    client.force_login(user)
    url = reverse("chat:thread", args=[thread.pk]) if thread else reverse("chat:home")
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def json_script(page, element_id):
    start = page.index(f'id="{element_id}"')
    body = page[page.index(">", start) + 1 : page.index("</script>", start)]
    return json.loads(body)


def test_the_page_lists_the_models_and_shows_the_threads_own_never_a_key(owner, db):
    qwen = ModelConfiguration.objects.create(name="Qwen", model="qwen3", base_url="http://q:1/v1", api_key=KEY)
    demo = ModelConfiguration.objects.create(name="Playground", api="demo", api_key=KEY)
    ModelConfiguration.objects.create(name="Hidden", model="h", api_key=KEY, enabled=False)
    thread = Thread.objects.create(owner=owner, title="t", model_choice=str(qwen.pk))

    page = page_for(owner, thread)
    assert KEY not in page
    assert 'id="model-picker"' in page
    models = json_script(page, "available-models")
    assert [m["id"] for m in models] == ["default", str(demo.pk), str(qwen.pk)]
    assert all(set(m) == {"id", "name", "label", "is_demo", "context_window"} for m in models)
    assert "Demo" in next(m for m in models if m["id"] == str(demo.pk))["label"]
    assert json_script(page, "model-info")["id"] == str(qwen.pk)
    assert 'id="demo-banner" role="note" hidden' in page  # not the demo: banner hidden

    home = page_for(owner)
    assert KEY not in home
    assert json_script(home, "model-info")["id"] == "default"  # the environment's demo model
    assert 'id="demo-banner" role="note">' in home


# --- the context budget in a run ---------------------------------------------------------------


async def test_a_small_context_window_leaves_out_the_oldest_messages_and_says_so(
    connect, owner, model_server, settings
):
    small = await row(model_server, name="Small", context_window=100_000, max_output_tokens=100)
    model_server.enqueue(answer(), answer(), answer())
    client = await connect(owner)
    questions = ["a" * 2000, "b" * 2000, "c" * 2000]
    await client.ask(questions[0], model=str(small.pk))
    thread = (await client.run_to_end())[0]["thread"]
    await client.ask(questions[1], thread=thread)
    second = await client.run_to_end()
    assert not [e for e in second if e["type"] == "run.note"]
    assert len(model_server.requests[1]["json"]["messages"]) == 4  # system, q1, a1, q2: it all fitted

    # Now the window holds the system prompt, the tools and the last question, with a little room to spare.
    toolset = await database_sync_to_async(load_toolset)(owner)
    tools = estimate_tools(RegistryToolbox(toolset.registry).definitions())
    needed = tools + estimate([ChatMessage("system", settings.AGENTWEB_SYSTEM_PROMPT), ChatMessage("user", "c" * 2000)])
    window = needed + 100 + 50
    await ModelConfiguration.objects.filter(pk=small.pk).aupdate(context_window=window)
    await client.ask(questions[2], thread=thread)
    third = await client.run_to_end()

    sent = model_server.requests[2]["json"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[1]["content"] == questions[2]
    notes = [e for e in third if e["type"] == "run.note"]
    expected = f"The oldest 4 messages were left out to fit the model's context window ({window} tokens)."
    assert [n["text"] for n in notes] == [expected]
    types = [e["type"] for e in third]
    assert types.index("run.note") < types.index("message.started")  # shown before the answer it explains
    run = await Run.objects.order_by("-id").afirst()
    assert run.notes == [expected]
    # The stored thread is whole: only what was sent was trimmed.
    assert await Message.objects.filter(thread_id=thread).acount() == 6
