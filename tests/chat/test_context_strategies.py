"""Context strategies through the websocket, against the scripted model server: `last_n` sends the last N turns
only; `summarise`, once the history passes its share of the window, asks for a summary, stores it (thread, a
ThreadSummary, its Usage row), shows it (event and snapshot), and the next requests carry it instead of the old
turns."""

import pytest

from chat.models import Thread, ThreadSummary, Usage
from chat.runs import execute
from chat.store.snapshot import SUMMARY_PREFIX
from providers.context_strategy import SUMMARY_INSTRUCTIONS, ContextStrategy, last_turns, split_turns
from providers.types import ChatMessage
from tests.support.model_server import ScriptedModelServer, SSEResponse, openai_sse_body

pytestmark = pytest.mark.django_db(transaction=True)


def use(monkeypatch, strategy):
    monkeypatch.setattr(execute, "run_options", lambda thread, agent=None: execute.RunOptions(context=strategy))


def reply(text, prompt=10, completion=5, finish_reason=None):
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return SSEResponse(openai_sse_body(text=text, usage=usage, chunk_text=4000, finish_reason=finish_reason))


@pytest.fixture
def model_server(settings):
    with ScriptedModelServer() as server:
        settings.AGENTWEB_LLM = {
            "api": "openai",
            "base_url": server.base_url,
            "model": "test-model",
            # 20 000 tokens for the history once the answer's 1024 are set aside
            "context_window": 21024,
        }
        yield server


async def turn(client, text, thread=None):
    await client.ask(text, thread=thread)
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed", events[-1]
    return events


def user_texts(carried):
    return [text for role, text in carried["messages"] if role == "user"]


async def test_last_n_sends_the_last_turns_only(connect, owner, model_server, monkeypatch):
    use(monkeypatch, ContextStrategy("last_n", last_n=2))
    model_server.enqueue(reply("one"), reply("two"), reply("three"))
    client = await connect(owner)
    await turn(client, "first")
    thread = str((await Thread.objects.aget()).pk)
    await turn(client, "second", thread)
    await turn(client, "third", thread)
    assert user_texts(model_server.carried(1)) == ["first", "second"]
    last = model_server.carried(2)
    assert user_texts(last) == ["second", "third"]
    assert [text for role, text in last["messages"] if role == "assistant"] == ["two"]
    assert last["system"]  # the system prompt stays


async def test_summarise_once_the_share_is_passed(connect, owner, model_server, monkeypatch):
    use(monkeypatch, ContextStrategy("summarise", share=0.5, keep_turns=1))
    long_answer = "The weather in Paris was mild. " * 1600  # ~12 400 tokens: past half of the 20 000
    model_server.enqueue(
        reply(long_answer),
        reply("The user asked about Paris; it was mild.", prompt=12500, completion=12),  # the summary
        reply("Berlin is cooler."),
        reply("Oslo is cold."),
    )
    client = await connect(owner)
    await turn(client, "Paris?")
    thread = await Thread.objects.aget()
    events = await turn(client, "And Berlin?", str(thread.pk))

    # The second turn first asked for a summary of the first, then sent it in the first turn's place.
    summary_request = model_server.carried(1)
    assert summary_request["system"] == SUMMARY_INSTRUCTIONS and summary_request["tools"] == []
    [(_, transcript)] = summary_request["messages"]
    assert "Paris?" in transcript and "mild" in transcript and "And Berlin?" not in transcript
    answered = model_server.carried(2)
    assert user_texts(answered) == ["And Berlin?"]
    assert SUMMARY_PREFIX + "The user asked about Paris; it was mild." in answered["system"]
    assert long_answer not in str(answered["messages"])

    # Stored on the thread and as a row, its call's usage recorded like any other.
    await thread.arefresh_from_db()
    assert thread.summary == "The user asked about Paris; it was mild."
    row = await ThreadSummary.objects.aget()
    assert row.text == thread.summary and row.through_order == thread.summary_through == 2
    assert row.usage == {"input_tokens": 12500, "output_tokens": 12, "estimated": False, "cost": None}
    assert [u.input_tokens async for u in Usage.objects.order_by("id")] == [10, 12500, 10]
    assert events[-1]["usage"]["input_tokens"] == 12500 + 10  # the run's totals count the summary's call

    # Shown: an event as it is made, and snapshots after.
    [summarised] = [e for e in events if e["type"] == "thread.summarised"]
    assert summarised["summary"]["text"] == thread.summary
    snapshot_client = await connect(owner)
    await snapshot_client.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None)
    snapshot = (await snapshot_client.until("thread.snapshot"))[-1]
    berlin = next(m for m in snapshot["messages"] if m["content"] == "And Berlin?")
    assert snapshot["summary"] == {"text": thread.summary, "before": berlin["id"]}
    assert summarised["summary"]["before"] == berlin["id"]

    # The next turn, under the share again: no new summary, and the request carries the stored one.
    await turn(client, "And Oslo?", str(thread.pk))
    assert len(model_server.requests) == 4
    last = model_server.carried(3)
    assert user_texts(last) == ["And Berlin?", "And Oslo?"]
    assert SUMMARY_PREFIX in last["system"] and long_answer not in str(last["messages"])
    assert await ThreadSummary.objects.acount() == 1


LONG_ANSWER = "The weather in Paris was mild. " * 1600  # ~12 400 tokens: past half of the 20 000


async def test_a_summary_has_its_own_output_limit_and_one_cut_off_is_asked_again_with_more(
    connect, owner, model_server, monkeypatch, settings
):
    # The agent's answers are held to 64 tokens; its summaries are not, and one cut at its limit is not used as whole.
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "max_tokens": 64}
    use(monkeypatch, ContextStrategy("summarise", share=0.5, keep_turns=1))
    model_server.enqueue(
        reply(LONG_ANSWER),
        reply("The user asked about Paris; it was", prompt=12500, completion=1024, finish_reason="length"),
        reply("The user asked about Paris; it was mild.", prompt=12500, completion=12),
        reply("Berlin is cooler."),
    )
    client = await connect(owner)
    await turn(client, "Paris?")
    thread = await Thread.objects.aget()
    events = await turn(client, "And Berlin?", str(thread.pk))
    limits = [request["json"].get("max_tokens") for request in model_server.requests]
    assert limits == [64, 1024, 2048, 64]
    await thread.arefresh_from_db()
    assert thread.summary == "The user asked about Paris; it was mild."
    assert SUMMARY_PREFIX + thread.summary in model_server.carried(3)["system"]
    # Both summary calls were spent: both counted, on the summary and in the run's totals.
    assert (await ThreadSummary.objects.aget()).usage["output_tokens"] == 1024 + 12
    assert [u.output_tokens async for u in Usage.objects.order_by("id")] == [5, 1024, 12, 5]
    assert events[-1]["usage"]["output_tokens"] == 1024 + 12 + 5


async def test_a_summary_cut_off_twice_is_not_used_and_the_run_says_so(connect, owner, model_server, monkeypatch):
    use(monkeypatch, ContextStrategy("summarise", share=0.5, keep_turns=1))
    cut = [reply("The user asked", prompt=12500, completion=limit, finish_reason="length") for limit in (1024, 2048)]
    model_server.enqueue(reply(LONG_ANSWER), *cut, reply("Berlin is cooler."))
    client = await connect(owner)
    await turn(client, "Paris?")
    thread = await Thread.objects.aget()
    events = await turn(client, "And Berlin?", str(thread.pk))
    [note] = [e["text"] for e in events if e["type"] == "run.note"]
    assert "could not be summarised" in note and "cut off at its output limit" in note
    await thread.arefresh_from_db()
    assert thread.summary == "" and await ThreadSummary.objects.acount() == 0
    answered = model_server.carried(3)
    assert SUMMARY_PREFIX not in answered["system"] and user_texts(answered) == ["Paris?", "And Berlin?"]
    assert [u.output_tokens async for u in Usage.objects.order_by("id")] == [5, 1024, 2048, 5]


async def test_trim_is_unchanged(connect, owner, model_server, monkeypatch):
    use(monkeypatch, ContextStrategy("trim"))
    model_server.enqueue(reply("one"), reply("two"))
    client = await connect(owner)
    await turn(client, "first")
    await turn(client, "second", str((await Thread.objects.aget()).pk))
    assert user_texts(model_server.carried(1)) == ["first", "second"]


def test_turns():
    system = ChatMessage(role="system", content="s")
    history = [
        system,
        ChatMessage(role="user", content="a"),
        ChatMessage(role="assistant", content="b"),
        ChatMessage(role="user", content="c"),
        ChatMessage(role="assistant", content="d"),
        ChatMessage(role="tool", content="e"),
    ]
    head, turns = split_turns(history)
    assert head == [system] and [[m.content for m in t] for t in turns] == [["a", "b"], ["c", "d", "e"]]
    assert [m.content for m in last_turns(history, 1)] == ["s", "c", "d", "e"]
    assert ContextStrategy.from_mapping({"kind": "summarise", "model": 3}).summary_model == "3"
    with pytest.raises(ValueError):
        ContextStrategy.from_mapping({"kind": "forget"})
