"""A tab that subscribes while a run streams: it misses nothing and gets nothing twice (docs/protocol.md, "Ordering
and seq"; the thread's log is delivery/log.py)."""

import asyncio
import copy
import json
import uuid

import pytest
from channels.db import database_sync_to_async

from chat import live, store
from chat.live import events
from chat.models import Message, Thread
from chat.runs.subscribe import rebuild, snapshot_and_tail
from delivery.log import MemoryLog
from tests.chat.test_store_run_claims import dead
from tests.support.model_server import SSEResponse, openai_sse_body
from tests.support.thread_view import ThreadView, shown_after

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_tab_subscribing_mid_stream_gets_every_later_event_once_after_its_snapshot(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.005
    first = await connect(owner)
    await first.ask("hello there, tell me something")
    opening = await first.until("message.delta")
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=opening[0]["thread"], after_seq=None)
    snapshot = await second.receive()
    later = await second.run_to_end()

    assert snapshot["type"] == "thread.snapshot"
    assert [e["seq"] for e in later] == list(range(snapshot["seq"] + 1, snapshot["seq"] + 1 + len(later)))
    answer = snapshot["messages"][-1]
    streamed = answer["content"] + "".join(e["text"] for e in later if e["type"] == "message.delta")
    completed = [e for e in later if e["type"] == "message.completed"][-1]
    assert streamed == completed["content"]


async def test_a_tab_resubscribing_mid_stream_gets_the_events_it_missed_once(connect, owner, settings):
    settings.AGENTWEB_DEMO_DELAY = 0.005
    first = await connect(owner)
    await first.ask("hello there, tell me something")
    seen = await first.until("message.delta")
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=seen[0]["thread"], after_seq=seen[-1]["seq"])
    later = await second.run_to_end()

    assert [e["seq"] for e in later] == list(range(seen[-1]["seq"] + 1, seen[-1]["seq"] + 1 + len(later)))
    assert later == [e for e in await first.run_to_end() if e["seq"] > seen[-1]["seq"]]


async def test_a_tab_subscribing_mid_stream_does_not_make_the_run_write_its_text(connect, owner, settings):
    """The tab is shown the text streamed so far, rebuilt from the thread's log (the run streams in this process, and
    is not asked either): the stream is not held up by a write."""
    settings.AGENTWEB_DEMO_DELAY = 0.005
    first = await connect(owner)
    await first.ask("hello there, tell me something")
    seen = await first.until("message.delta")
    seen += await first.until("message.delta")
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=seen[0]["thread"], after_seq=None)
    tab = shown_after([await second.receive()])
    while tab.last_seq < seen[-1]["seq"]:  # the snapshot, then the log's events from the message's start
        tab.handle(await second.receive())

    streaming = tab.last_assistant()
    assert streaming.status == "streaming" and streaming.text.startswith(
        "".join(e["text"] for e in seen if e["type"] == "message.delta")
    )
    stored = await Message.objects.aget(pk=streaming.id)
    assert (stored.status, stored.content) == ("streaming", "")
    await first.run_to_end()


# --- a run that streams in another process: its message rebuilt from the log's tail (chat/runs/subscribe.py) -------


def streamed(text="", tool_calls=(), delay=0.002):
    """An OpenAI stream sent one SSE event at a time, so the answer and the calls' arguments come in many frames."""
    body = openai_sse_body(text=text, tool_calls=[{"id": i, "name": n, "arguments": a} for i, n, a in tool_calls])
    return SSEResponse(body, pieces=[f"{event}\n\n".encode() for event in body.split("\n\n") if event], delay=delay)


class Recording:
    """Every event published to the thread, each with the database's snapshot right after it (before the next)."""

    def __init__(self, monkeypatch):
        self.events: list[str] = []
        self.stored: list[dict] = []
        publish = MemoryLog.publish

        async def recorded(log, thread_id, events):
            self.pending += 1
            try:
                last = await publish(log, thread_id, events)
                texts = await log.read_after(thread_id, last - len(events))
                thread = await Thread.objects.aget(pk=thread_id)
                snapshot = await database_sync_to_async(store.build_snapshot)(thread=thread, seq=0, model={})
                self.events += texts
                self.stored += [snapshot] * len(events)
                return last
            finally:
                self.pending -= 1

        self.pending = 0
        monkeypatch.setattr(MemoryLog, "publish", recorded)

    async def check_every_subscribe(self) -> int:
        """A tab subscribing while the run streams elsewhere reads the tail after event i, then the database after
        event k (k >= i: whatever the run wrote meanwhile), then applies what the group delivers after event i. For
        every i and many k, it shows after each event j >= i the answers (text and cards) that a tab that watched
        from the start shows after event j, and at the end the same notice and notes as well."""
        while self.pending:  # the run's last publish has reached the tabs: its snapshot is on its way
            await asyncio.sleep(0.01)
        watcher, watched = ThreadView(), []
        for text in self.events:
            watcher.handle(json.loads(text))
            watched.append(watcher.answers())
        checked, last = 0, len(self.events) - 1
        opening = next(n for n, text in enumerate(self.events) if json.loads(text)["type"] == "message.started")
        for i in range(len(self.events)):
            tail = self.events[: i + 1]
            starts = [n for n, text in enumerate(tail) if json.loads(text)["type"] == "message.started"]
            # Before any message has started, the stored snapshot is sent, as of the number read before it: exact
            # when the database is read at once (a message that started and ended meanwhile lags until its end).
            later = (1, 2, 3, 5, 10, 30, last) if starts else (1, 2)
            for k in sorted({min(i + n, last) for n in (0, *later)}):
                snapshot = copy.deepcopy(self.stored[k])
                if starts:
                    first = rebuild(snapshot, tail[starts[-1] :])
                else:
                    first = [json.dumps({**snapshot, "seq": json.loads(tail[-1])["seq"]})]
                tab = shown_after(first)
                for j in range(i, len(self.events)):
                    if j > i:
                        tab.handle(json.loads(self.events[j]))
                    if starts or j >= opening:  # before, it shows the run's first message empty: a watcher does not
                        assert tab.answers() == watched[j], (i, k, j)
                assert (tab.answers(), tab.notice) == (watched[last], watcher.notice), (i, k)
                # A note told between the two reads is in both the snapshot and the events after the tail: it shows
                # twice (notes are added, not set; the runs' other events set what they say).
                if not any(json.loads(text)["type"] == "run.note" for text in self.events[i + 1 : k + 1]):
                    assert tab.notes == watcher.notes, (i, k)
                checked += 1
        return checked


@pytest.fixture
def recording(monkeypatch, settings):
    settings.AGENTWEB_COALESCE_WINDOW = 0.001  # many small frames
    return Recording(monkeypatch)


async def test_a_rebuilt_message_is_what_a_tab_that_watched_shows(connect, owner, model_server, recording):
    both = [("c1", "calculator", {"expression": "23*19"}), ("c2", "calculator", {"expression": "2+2"})]
    # Thinking (reasoning deltas), two calls, then a call written into the text (the run adds a note after it).
    leaked = '<tool_call>{"name": "calculator", "arguments": {"expression": "437+4"}}</tool_call>'
    model_server.enqueue(
        streamed("<think>Two sums first.</think>Let me work both out. ", both),
        streamed(f"Now one more. {leaked}"),
        streamed("23 × 19 = 437, and with 2 + 2 more it is 441. " * 3),
    )
    client = await connect(owner)
    await client.ask("what is 23*19 and then plus 4?")
    assert (await client.run_to_end())[-1]["type"] == "run.completed"

    told = [json.loads(text)["type"] for text in recording.events]
    assert told.count("message.delta") > 10 and "message.reasoning_delta" in told and "run.note" in told
    assert await recording.check_every_subscribe() > 100


async def test_a_rebuilt_resumed_run_is_what_a_tab_that_watched_shows(
    connect,
    owner,
    model_server,
    recording,
    calculator_needs_approval,
):
    both = [("c1", "calculator", {"expression": "1+1"}), ("c2", "calculator", {"expression": "2+2"})]
    model_server.enqueue(
        streamed("Both need you. ", both),
        streamed("So it is 30, and the other one you declined."),
    )
    client = await connect(owner)
    await client.ask("two sums, please")
    waiting = (await client.until("run.waiting"))[-1]
    first, second = waiting["tool_calls"]
    await client.send(type="tool_call.decide", tool_call=first, decision="edit", args={"expression": "5*6"})
    await client.until("tool_call.decided")
    await client.send(type="tool_call.decide", tool_call=second, decision="reject", message="not this one")
    assert (await client.run_to_end())[-1]["type"] == "run.completed"

    assert await recording.check_every_subscribe() > 100


async def test_a_tab_subscribing_to_a_dead_processs_run_is_shown_it_interrupted_with_the_text_streamed(owner):
    """The run's process died (its heartbeat stopped) after it streamed more than it last wrote down: the snapshot the
    tab gets says interrupted and holds the streamed text (read back from the thread's log), not "running" with the
    text written before (the bench's worker-kill found the snapshot read before the run was interrupted)."""
    turn = await database_sync_to_async(store.start_turn)(
        user=owner, thread_id=None, content="hello", client_msg_id=uuid.uuid4(), step_limit=5
    )
    answer = await database_sync_to_async(_gone_process_streams)(turn)
    await live.publish(turn.thread.pk, [events.message_started(answer), events.message_delta(answer, "Hello, world")])
    thread = await Thread.objects.aget(pk=turn.thread.pk)

    [text] = await snapshot_and_tail(thread)

    snapshot = json.loads(text)
    assert snapshot["run"]["status"] == "interrupted"
    assert snapshot["messages"][-1]["content"] == "Hello, world"
    assert snapshot["seq"] == await live.last_seq(thread.pk)


def _gone_process_streams(turn) -> int:
    """The turn's run taken by a process that then stopped beating five minutes ago, its answer written as "Hello"."""
    return dead(turn)
