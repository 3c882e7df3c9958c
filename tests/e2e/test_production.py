"""The app as deployed (docs/deploy.md): PostgreSQL, Redis, two Daphne processes and a run worker.

A person's tabs may be connected to different Daphne processes; runs execute in the worker. What one tab
does reaches the others, a run outlives the Daphne process that started it, and a run whose worker died
becomes interrupted and can be retried.
"""

import asyncio
import json
import sys
import time
import uuid

import httpx
import pytest

from tests.e2e.test_mcp_server import children_of
from tests.support.mcp_servers.running import SCRIPT
from tests.support.processes import Worker, log_in, model_server
from tests.support.production import cluster
from tests.support.sockets import ChatSocket
from tests.support.sse import EventStream
from tests.support.thread_view import shown_after

SETUP = (
    "from django.contrib.auth.models import User; from tools.models import ToolSetting; "
    "User.objects.create_user('ada', password='lovelace-1815'); "
    "ToolSetting.objects.filter(name='current_time').update(requires_approval=True)"
)
API_KEY = "sk-production-secret-never-shown"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("production")
    # An MCP server every process sees (each Daphne and the worker runs its own copy of this stdio server).
    mcp_config = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(SCRIPT)], "requireApproval": False}
    mcp_config.write_text(json.dumps({"mcpServers": {"srv": entry}}))
    with (
        model_server([], tmp_path) as model_url,
        cluster(
            tmp_path,
            setup=SETUP,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="production-model",
            AGENTWEB_LLM_API_KEY=API_KEY,
            AGENTWEB_TOOL_MODULES="tests.support.tools_for_tests",
            # A dead worker's run is seen as such after 3 s rather than 45 s.
            AGENTWEB_HEARTBEAT_SECONDS="0.5",
            AGENTWEB_RUN_STALE_SECONDS="3",
            AGENTWEB_RUN_HANDOVER_SECONDS="2",
            AGENTWEB_MCP_CONFIG=str(mcp_config),
        ) as running,
    ):
        first, second = running.daphnes
        yield {
            "cluster": running,
            "model_url": model_url,
            "first": first.url,
            "second": second.url,
            "cookie": log_in(first.url, "ada", "lovelace-1815"),
        }


def script(app, *entries: dict) -> None:
    """What the model answers next, in order."""
    httpx.post(f"{app['model_url']}/_script", json=list(entries)).raise_for_status()


def send(text: str) -> dict:
    return {"type": "message.send", "thread": None, "content": text, "client_msg_id": str(uuid.uuid4())}


async def until_not_running(socket: ChatSocket, thread: str) -> dict:
    """The thread's snapshot once its run is no longer running (a dead worker's: after the 3 s stale limit)."""
    for _ in range(60):
        await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
        snapshot = (await socket.until("thread.snapshot"))[-1]
        if snapshot["run"]["status"] != "running":
            break
        await asyncio.sleep(0.5)
    return snapshot


def last_message(events: list[dict]) -> str:
    return [e for e in events if e["type"] == "message.completed"][-1]["content"]


def test_a_turn_runs_in_the_worker_and_its_tool_result_goes_back_to_the_model(app):
    script(
        app,
        {"tool_calls": [{"id": "call_p1", "name": "calculator", "arguments": {"expression": "23*19"}}]},
        {"text": "23 × 19 = 437."},
    )

    async def turn():
        async with ChatSocket(app["first"], app["cookie"]) as socket:
            await socket.send(**send("what is 23*19?"))
            return await socket.until("run.completed", "run.failed")

    events = asyncio.run(turn())

    assert events[-1]["type"] == "run.completed"
    assert [(e["status"], e["content"]) for e in events if e["type"] == "tool_call.completed"] == [("success", "437")]
    assert last_message(events) == "23 × 19 = 437."
    tool_message = [m for m in httpx.get(f"{app['model_url']}/_requests").json()[-1]["json"]["messages"]][-1]
    assert (tool_message["role"], tool_message["tool_call_id"], tool_message["content"]) == ("tool", "call_p1", "437")
    assert "Running worker" in app["cluster"].worker.log_tail(200) and API_KEY not in app["cluster"].worker.log_tail(
        200
    )


def test_a_run_in_the_worker_calls_an_mcp_tool_over_the_workers_own_connection(app):
    worker = app["cluster"].worker

    async def turn(text: str) -> list[dict]:
        async with ChatSocket(app["first"], app["cookie"]) as socket:
            await socket.send(**send(text))
            return await socket.until("run.completed", "run.failed")

    # The worker connects to its MCP servers as it starts (chat/management/commands/runworker.py), before any run.
    deadline = time.monotonic() + 60
    while "MCP server srv connected" not in worker.log_tail(400) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "MCP server srv connected" in worker.log_tail(400), worker.log_tail()
    servers = children_of(worker.process.pid)
    assert servers, "the worker runs its own copy of the stdio server"

    script(
        app,
        {"tool_calls": [{"id": "call_m1", "name": "srv__add", "arguments": {"a": 20, "b": 22}}]},
        {"text": "20 + 22 = 42."},
    )
    events = asyncio.run(turn("what is 20+22?"))

    assert events[-1]["type"] == "run.completed"
    assert [(e["status"], e["content"]) for e in events if e["type"] == "tool_call.completed"] == [("success", "42.0")]
    assert last_message(events) == "20 + 22 = 42."
    tool_message = httpx.get(f"{app['model_url']}/_requests").json()[-1]["json"]["messages"][-1]
    assert (tool_message["role"], tool_message["tool_call_id"], tool_message["content"]) == ("tool", "call_m1", "42.0")
    assert children_of(worker.process.pid) == servers  # the same connection, not a new server per call


def test_run_started_in_the_worker_names_the_message_it_answers(app):
    script(app, {"text": "Hello."})

    async def turn():
        async with ChatSocket(app["first"], app["cookie"]) as socket:
            await socket.send(**send("hello"))
            events = await socket.until("run.completed", "run.failed")
            await socket.send(type="thread.subscribe", thread=events[0]["thread"], after_seq=None)
            return events, (await socket.until("thread.snapshot"))[-1]

    events, snapshot = asyncio.run(turn())

    started = next(e for e in events if e["type"] == "run.started")
    assert started["message"] == snapshot["messages"][0]["id"]


def test_a_tab_on_the_other_daphne_sees_the_same_turn(app):
    script(app, {"text": "First answer."}, {"text": "Second answer, seen from both tabs.", "delay_ms": 5})

    async def both_tabs():
        async with ChatSocket(app["first"], app["cookie"]) as first, ChatSocket(app["second"], app["cookie"]) as other:
            await first.send(**send("hello"))
            thread = (await first.until("run.completed"))[0]["thread"]
            await other.send(type="thread.subscribe", thread=thread, after_seq=None)
            await other.until("thread.snapshot")
            await first.send(type="message.send", thread=thread, content="again", client_msg_id=str(uuid.uuid4()))
            return await first.until("run.completed"), await other.until("run.completed")

    seen_by_first, seen_by_other = asyncio.run(both_tabs())

    assert last_message(seen_by_other) == last_message(seen_by_first) == "Second answer, seen from both tabs."
    assert [e["seq"] for e in seen_by_other] == [e["seq"] for e in seen_by_first]


def test_a_tab_reconnecting_to_the_other_daphne_gets_exactly_the_events_it_missed(app):
    """The thread's log is shared through Redis: any process sends a returning tab what it missed, not a snapshot."""
    script(app, {"text": " ".join(f"word{n}" for n in range(20)), "delay_ms": 5})

    async def reconnect_elsewhere():
        async with ChatSocket(app["first"], app["cookie"]) as watcher:
            async with ChatSocket(app["first"], app["cookie"]) as tab:
                await tab.send(**send("hello"))
                seen = await tab.until("message.delta")
            everything = seen + await watcher_until_done(watcher, seen[0]["thread"], seen[-1]["seq"])
        async with ChatSocket(app["second"], app["cookie"]) as tab:
            await tab.send(type="thread.subscribe", thread=seen[0]["thread"], after_seq=seen[-1]["seq"])
            return seen, everything, await tab.until("run.completed", "run.failed", "thread.snapshot")

    async def watcher_until_done(watcher, thread, after_seq):
        await watcher.send(type="thread.subscribe", thread=thread, after_seq=after_seq)
        return await watcher.until("run.completed", "run.failed")

    seen, everything, missed = asyncio.run(reconnect_elsewhere())

    assert missed[-1]["type"] == "run.completed"
    numbered = [e for e in everything if "seq" in e]  # the watcher also hears of the new thread (thread.listed)
    assert seen + missed == numbered


def test_a_run_outlives_the_daphne_process_that_started_it(app):
    answer = " ".join(f"word{n}" for n in range(60))
    script(app, {"text": answer, "delay_ms": 40})
    first = app["cluster"].daphnes[0]

    async def start():
        async with ChatSocket(first.url, app["cookie"]) as socket:
            await socket.send(**send("a long answer please"))
            return (await socket.until("message.delta"))[0]["thread"]

    thread = asyncio.run(start())
    first.kill()
    try:

        async def follow_on_the_other():
            async with ChatSocket(app["second"], app["cookie"]) as socket:
                await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
                snapshot = (await socket.until("thread.snapshot"))[-1]
                return snapshot, await socket.until("run.completed", "run.failed")

        snapshot, events = asyncio.run(follow_on_the_other())
    finally:
        first.start()

    assert snapshot["run"]["status"] == "running"
    assert events[-1]["type"] == "run.completed"
    assert last_message(events) == answer
    # The state came from the worker running the run, exactly as of its number: what follows goes on from it.
    assert events[0]["seq"] == snapshot["seq"] + 1
    streamed = "".join(e["text"] for e in events if e["type"] == "message.delta")
    assert snapshot["messages"][-1]["content"] + streamed == answer


def test_tabs_subscribing_on_the_other_daphne_mid_run_end_showing_what_the_watching_tab_shows(app):
    """Tabs that subscribe while the worker streams a long answer with tool calls, with no after_seq or with one
    the log's tail no longer reaches back to, are sent the run's current message empty and the log's events from
    its start: each ends with exactly the text and the cards of the tab that watched from the start."""
    calculator = [
        {"id": "call_a", "name": "calculator", "arguments": {"expression": "23*19"}},
        {"id": "call_b", "name": "calculator", "arguments": {"expression": "437+4"}},
    ]
    script(
        app,
        {"text": "Let me work both out, one after the other. " * 6, "tool_calls": calculator, "delay_ms": 8},
        {"text": "And one more to be sure. " * 6, "tool_calls": [{**calculator[0], "id": "call_c"}], "delay_ms": 8},
        {"text": " ".join(f"word{n}" for n in range(120)), "delay_ms": 8},
    )
    other = app["second"]

    async def scenario():
        async with (
            ChatSocket(app["first"], app["cookie"]) as watcher,
            ChatSocket(other, app["cookie"]) as fresh,
            ChatSocket(other, app["cookie"]) as stale,
            ChatSocket(other, app["cookie"]) as late,
        ):
            await watcher.send(**send("work it out"))
            seen = await watcher.until("message.delta")
            thread = seen[0]["thread"]
            await fresh.send(type="thread.subscribe", thread=thread, after_seq=None)
            seen += await watcher.until("tool_call.args_delta")
            # The tail keeps the current message's events, not the stale tab's last number (a capped tail trims so).
            started = [e["seq"] for e in seen if e["type"] == "message.started"][-1]
            trim_tail(app, thread, before=started)
            await stale.send(type="thread.subscribe", thread=thread, after_seq=seen[0]["seq"])
            while [e["type"] for e in seen].count("message.started") < 3:  # on to the last answer
                seen += await watcher.until("message.started")
            seen += await watcher.until("message.delta")
            await late.send(type="thread.subscribe", thread=thread, after_seq=None)
            seen += await watcher.until("run.completed", "run.failed")
            return seen, [await tab.until("run.completed", "run.failed") for tab in (fresh, stale, late)]

    watched, tabs = asyncio.run(scenario())

    assert watched[-1]["type"] == "run.completed"
    expected = shown_after(watched).answers()
    assert [len(cards) for *_, cards in expected] == [2, 1, 0]
    for received in tabs:
        events = [e for e in received if "seq" in e]  # not the person's thread list (thread.listed)
        snapshot = events[0]
        assert snapshot["type"] == "thread.snapshot"
        # Rebuilt, not asked of the worker: the current message comes empty, its events follow from its start.
        assert snapshot["messages"][-1]["content"] == "" and snapshot["messages"][-1]["tool_calls"] == []
        assert events[1]["type"] == "message.started" and events[1]["seq"] == snapshot["seq"] + 1
        assert shown_after(events).answers() == expected


def trim_tail(app, thread: str, *, before: int) -> None:
    """Drop the thread's events numbered below `before` from the log's tail in Redis."""
    import redis

    env = app["cluster"].env
    client = redis.Redis.from_url(env["REDIS_URL"])
    try:
        client.xtrim(f"{env['AGENTWEB_REDIS_PREFIX']}:log:{thread}:events", minid=f"{before}-0", approximate=False)
    finally:
        client.close()


def test_an_approval_waiting_on_one_daphne_is_decided_on_the_other_and_the_worker_resumes(app):
    script(
        app,
        {"tool_calls": [{"id": "call_t1", "name": "current_time", "arguments": {}}]},
        {"text": "It is now."},
    )

    async def approve_elsewhere():
        async with ChatSocket(app["first"], app["cookie"]) as first, ChatSocket(app["second"], app["cookie"]) as other:
            await first.send(**send("what time is it?"))
            waiting = await first.until("run.waiting")
            thread, call = waiting[0]["thread"], waiting[-1]["tool_calls"][0]
            await other.send(type="thread.subscribe", thread=thread, after_seq=None)
            snapshot = (await other.until("thread.snapshot"))[-1]
            await other.send(type="tool_call.decide", tool_call=call, decision="approve")
            return snapshot, await other.until("run.completed"), await first.until("run.completed")

    snapshot, on_other, on_first = asyncio.run(approve_elsewhere())

    assert snapshot["run"]["status"] == "waiting"
    for events in (on_other, on_first):
        assert [e["decision"] for e in events if e["type"] == "tool_call.decided"] == ["approve"]
        assert [e["status"] for e in events if e["type"] == "tool_call.completed"] == ["success"]
        assert last_message(events) == "It is now."


def test_stop_on_the_other_daphne_stops_the_run_in_the_worker(app):
    script(app, {"hang": True, "text": "This answer never ends"})

    async def stop_elsewhere():
        async with ChatSocket(app["first"], app["cookie"]) as first, ChatSocket(app["second"], app["cookie"]) as other:
            await first.send(**send("go on forever"))
            thread = (await first.until("message.delta"))[0]["thread"]
            await other.send(type="thread.subscribe", thread=thread, after_seq=None)
            await other.until("thread.snapshot")
            await other.send(type="run.cancel", thread=thread)
            return await other.until("run.cancelled", "error"), await first.until("run.cancelled")

    on_other, on_first = asyncio.run(stop_elsewhere())

    assert on_other[-1]["type"] == on_first[-1]["type"] == "run.cancelled"


def test_a_tools_request_for_input_in_the_worker_is_answered_from_the_other_daphne(app):
    script(
        app,
        {"tool_calls": [{"id": "call_i1", "name": "ask_for_details", "arguments": {"purpose": "the badge"}}]},
        {"text": "Badge ordered."},
    )
    good = {"name": "Ada", "email": "ada@example.org"}

    async def answer_elsewhere():
        async with ChatSocket(app["first"], app["cookie"]) as first, ChatSocket(app["second"], app["cookie"]) as other:
            await first.send(**send("order my badge"))
            asked = (await first.until("tool_call.input_requested"))[-1]
            thread, call, request = asked["thread"], asked["tool_call"], asked["request"]
            # The other Daphne's tab loads the thread: the snapshot and the log's tail after it (the worker is not
            # asked) show the open form.
            await other.send(type="thread.subscribe", thread=thread, after_seq=None)
            loaded = await other.until("tool_call.input_requested")
            frame = {"type": "tool_call.input", "thread": thread, "tool_call": call, "request": request}
            # An answer that does not fit is refused by the worker, to the socket that sent it.
            await other.send(**frame, action="accept", content={"name": "Ada", "email": "no"}, ref="bad")
            refused = (await other.until("error"))[-1]
            await other.send(**frame, action="accept", content=good)
            return asked, loaded, refused, await other.until("run.completed"), await first.until("run.completed")

    asked, loaded, refused, on_other, on_first = asyncio.run(answer_elsewhere())
    call, request = asked["tool_call"], asked["request"]

    assert [e["type"] for e in loaded].count("thread.snapshot") == 1
    shown = shown_after(loaded)
    [card] = [card for message in shown.messages for card in message.cards]
    assert (card, loaded[-1]["tool_call"], loaded[-1]["request"]) == (call, call, request)
    assert (refused["code"], refused["ref"]) == ("invalid_input", "bad")
    assert "email: is not a valid email" in refused["message"]
    for events in (on_other, on_first):
        answered = [(e["action"], e["by"]) for e in events if e["type"] == "tool_call.input_answered"]
        assert answered == [("accept", "ada")]
        [completed] = [e for e in events if e["type"] == "tool_call.completed"]
        assert json.loads(completed["content"]) == {"action": "accept", "content": good}
        assert last_message(events) == "Badge ordered."


def test_the_run_apis_event_stream_on_one_daphne_follows_a_run_the_worker_runs(app):
    """A program's key, its message sent to the first Daphne, the thread followed as Server-Sent Events from the second:
    the run is the worker's, its events reach the stream through Redis, and a resume there misses nothing."""
    printed = app["cluster"].manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from api.models import ApiKey; "
        "print('KEY', ApiKey.issue(User.objects.get(username='ada'), 'production')[1])",
    )
    key = next(line for line in printed.splitlines() if line.startswith("KEY "))[4:]
    answer = " ".join(f"token{i}" for i in range(60)) + "."
    script(app, {"text": answer, "delay_ms": 20})

    async def send_then_follow():
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx.AsyncClient(base_url=f"{app['first']}/api/v1", headers=headers, timeout=30) as first,
            httpx.AsyncClient(base_url=f"{app['second']}/api/v1", headers=headers, timeout=30) as second,
        ):
            started = (await first.post("/threads", json={"content": "stream it"})).json()
            url = f"/threads/{started['thread']}/events"
            async with EventStream(second, url) as stream:
                seen = [await stream.next()]
                while sum(e.type == "message.delta" for e in seen) < 3:
                    seen.append(await stream.next())
            async with EventStream(second, url, headers={"Last-Event-ID": stream.last_id}) as resumed:
                rest = await resumed.until("run.completed", "run.failed")
            listed = (await second.get("/threads")).json()["threads"]
            return started, seen, rest, listed

    started, seen, rest, listed = asyncio.run(send_then_follow())

    assert rest[-1].type == "run.completed"
    held = "".join(m["content"] for m in seen[0].data["messages"] if m["role"] == "assistant")
    deltas = "".join(e.data["text"] for e in seen + rest if e.type == "message.delta")
    assert held + deltas == answer
    assert [t["source"] for t in listed if t["id"] == started["thread"]] == ["api"]
    assert "Running worker" in app["cluster"].worker.log_tail(400)


def test_a_tools_request_for_input_in_the_worker_is_answered_through_the_run_api(app):
    """The answer goes to the worker through Redis; the worker's refusal of one that does not fit comes back as the
    HTTP error, and its taking the good one as 200."""
    printed = app["cluster"].manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from api.models import ApiKey; "
        "print('KEY', ApiKey.issue(User.objects.get(username='ada'), 'input')[1])",
    )
    key = next(line for line in printed.splitlines() if line.startswith("KEY "))[4:]
    script(
        app,
        {"tool_calls": [{"id": "call_i2", "name": "ask_for_details", "arguments": {"purpose": "the pass"}}]},
        {"text": "Pass ordered."},
    )

    async def answer():
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx.AsyncClient(base_url=f"{app['first']}/api/v1", headers=headers, timeout=30) as first,
            httpx.AsyncClient(base_url=f"{app['second']}/api/v1", headers=headers, timeout=30) as second,
        ):
            thread = (await first.post("/threads", json={"content": "order my pass"})).json()["thread"]
            async with EventStream(second, f"/threads/{thread}/events") as stream:
                asked = (await stream.until("tool_call.input_requested"))[-1].data
                form = {"tool_call": asked["tool_call"], "request": asked["request"], "action": "accept"}
                bad = await second.post(f"/threads/{thread}/input", json={**form, "content": {"name": "Ada"}})
                good = {"name": "Ada", "email": "ada@example.org"}
                taken = await second.post(f"/threads/{thread}/input", json={**form, "content": good})
                return bad, taken, await stream.until("run.completed", "run.failed")

    bad, taken, events = asyncio.run(answer())
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_input"
    assert taken.status_code == 200 and taken.json() == {"answered": True}
    assert events[-1].type == "run.completed"


def test_a_run_whose_worker_died_is_interrupted_and_a_new_worker_retries_it(app):
    running = app["cluster"]
    script(app, {"hang": True, "text": "Half an ans"}, {"text": "A whole answer."})

    async def start():
        async with ChatSocket(app["first"], app["cookie"]) as socket:
            await socket.send(**send("tell me"))
            return (await socket.until("message.delta"))[0]["thread"]

    thread = asyncio.run(start())
    running.worker.kill()
    running.worker = Worker(running.env, name="worker-2").start()

    async def retry():
        async with ChatSocket(app["second"], app["cookie"]) as socket:
            snapshot = await until_not_running(socket, thread)
            await socket.send(type="run.retry", thread=thread)
            return snapshot, await socket.until("run.completed", "run.failed", "error")

    snapshot, events = asyncio.run(retry())

    assert snapshot["run"]["status"] == "interrupted"
    assert events[-1]["type"] == "run.completed"
    assert last_message(events) == "A whole answer."


def test_a_tab_that_watched_a_dead_workers_run_takes_what_follows_as_new(app):
    """The dead worker numbered its events in memory; a tab still open on a Daphne process saw them. The retry's
    events must come after those numbers, or the tab (which drops repeats) would miss them."""
    running = app["cluster"]
    # An answer that streams slowly, for as long as the test needs: the worker dies in the middle of it.
    script(app, {"text": "word " * 400, "delay_ms": 50}, {"text": "The retried answer."})

    async def scenario():
        async with ChatSocket(app["second"], app["cookie"]) as watcher, ChatSocket(app["first"], app["cookie"]) as me:
            await me.send(**send("tell me"))
            thread = (await me.until("message.delta"))[0]["thread"]
            await watcher.send(type="thread.subscribe", thread=thread, after_seq=None)
            await watcher.until("thread.snapshot")
            await watcher.until("message.delta")
            seen = (await watcher.until("message.delta"))[-1]["seq"]  # numbered by the worker, in its memory

            running.worker.kill()
            running.worker = Worker(running.env, name="worker-4").start()
            await until_not_running(me, thread)
            await watcher.until("run.failed")  # the dead run's: the tab is told it was interrupted
            await me.send(type="run.retry", thread=thread)
            return seen, await watcher.until("run.completed", "run.failed", "error")

    seen, events = asyncio.run(scenario())

    numbered = [e["seq"] for e in events if "seq" in e]
    assert numbered and min(numbered) > seen
    assert last_message(events) == "The retried answer."


def test_a_tab_watching_a_dead_workers_run_is_told_it_ended_with_the_text_it_had_shown(app):
    """The worker wrote the answer's text only every 30 s; killed before that, the text is read back from the
    thread's log, kept, and sent to the tab that watched (as a clean stop sends it)."""
    running = app["cluster"]
    script(app, {"text": "word " * 400, "delay_ms": 50})

    async def scenario():
        async with ChatSocket(app["second"], app["cookie"]) as watcher, ChatSocket(app["first"], app["cookie"]) as me:
            await me.send(**send("tell me"))
            thread = (await me.until("message.delta"))[0]["thread"]
            await watcher.send(type="thread.subscribe", thread=thread, after_seq=None)
            await watcher.until("thread.snapshot")
            seen = [event for _ in range(5) for event in await watcher.until("message.delta")]
            running.worker.kill()
            running.worker = Worker(running.env, name="worker-5").start()
            shown = "".join(e["text"] for e in seen if e["type"] == "message.delta")
            snapshot = await until_not_running(me, thread)
            return shown, await watcher.until("run.failed"), snapshot

    shown, events, snapshot = asyncio.run(scenario())

    completed = [e for e in events if e["type"] == "message.completed"][-1]
    assert completed["status"] == "error" and completed["content"].startswith(shown) and shown.startswith("word")
    assert snapshot["run"]["status"] == "interrupted"
    assert snapshot["messages"][-1]["content"] == completed["content"]


def test_with_no_worker_running_a_run_fails_soon_and_says_why(app):
    running = app["cluster"]
    running.worker.kill()

    async def turn():
        async with ChatSocket(app["first"], app["cookie"]) as socket:
            await socket.send(**send("is anyone there?"))
            return await socket.until("run.completed", "run.failed", "error")

    try:
        events = asyncio.run(turn())
    finally:
        running.worker = Worker(running.env, name="worker-3").start()

    assert events[-1]["type"] == "run.failed"
    assert "No run worker took this run within 2 s" in events[-1]["error"]
    assert "runworker agentweb-runs" in events[-1]["error"]


def test_the_model_api_key_is_stored_encrypted_in_postgresql(app):
    running = app["cluster"]
    running.manage(
        "shell",
        "-c",
        "from modelconfig.models import ModelConfiguration; "
        f"ModelConfiguration.objects.create(name='stored', api='openai', model='m', api_key={API_KEY!r})",
    )

    raw = running.manage(
        "shell",
        "-c",
        "from django.db import connection; c = connection.cursor(); "
        "c.execute('SELECT api_key FROM modelconfig_modelconfiguration'); import json; print(json.dumps(c.fetchall()))",
    )

    stored = json.loads(raw.strip().splitlines()[-1])
    assert stored and all(API_KEY not in value for (value,) in stored)


def test_page_views_borrow_pooled_connections_rather_than_open_one_each(app):
    """Under ASGI every page view runs in a thread of its own; without the pool each opened (and dropped) a
    PostgreSQL connection of its own."""
    database = app["cluster"].env["DATABASE_URL"].rsplit("/", 1)[1]

    def sessions_opened() -> int:
        import psycopg

        from tests.support.production import POSTGRES_ADMIN_URL

        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
            row = admin.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s", (database,)).fetchone()
        return row[0]

    with httpx.Client(base_url=app["first"], headers={"Cookie": app["cookie"]}) as browser:
        browser.get("/").raise_for_status()  # the pool is open
        before = sessions_opened()
        for _ in range(30):
            assert browser.get("/").status_code == 200
        time.sleep(1.5)  # backends report their statistics to pg_stat_database within a second
        opened = sessions_opened() - before
    assert opened <= 3  # what the pool may add while it grows; 30 without it


def test_each_daphne_process_answers_its_health_check_once_postgresql_and_redis_answer(app):
    for url in (app["first"], app["second"]):
        response = httpx.get(f"{url}/healthz")

        assert (response.status_code, response.text) == (200, "ok\n")


def test_a_worker_stopped_cleanly_mid_answer_keeps_all_the_text_it_streamed(app):
    running = app["cluster"]
    script(app, {"text": " ".join(f"word{i}" for i in range(2000)), "delay_ms": 50})

    async def stream_then_stop():
        received = []
        async with ChatSocket(app["first"], app["cookie"]) as socket:
            await socket.send(**send("tell me"))
            events = await socket.until("message.delta")
            received.append(events[-1]["text"])
            while len(received) < 20:
                received.append((await socket.until("message.delta"))[-1]["text"])
            running.worker.process.terminate()  # SIGTERM, as systemd or Docker stop it
            for event in await socket.until("run.failed", "run.completed", "run.cancelled"):
                received.append(event.get("text", "") if event["type"] == "message.delta" else "")
            return events[0]["thread"], "".join(received), event

    thread, received, last = asyncio.run(stream_then_stop())
    running.worker.process.wait(30)
    running.worker = Worker(running.env, name="worker-3").start()

    async def look():
        async with ChatSocket(app["second"], app["cookie"]) as socket:
            await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
            return (await socket.until("thread.snapshot"))[-1]

    snapshot = asyncio.run(look())
    assert last["type"] == "run.failed"
    assert snapshot["run"]["status"] == "interrupted"
    assert snapshot["messages"][-1]["content"].startswith(received)
