"""GET /api/v1/threads/{id}/events: a thread's events as Server-Sent Events, resumable with Last-Event-ID, against the
real server (tests/api/conftest.py)."""

import asyncio

from tests.api.conftest import client, script
from tests.support.sse import EventStream

LONG_ANSWER = " ".join(f"word{i}" for i in range(120)) + "."


def deltas(events) -> str:
    return "".join(e.data["text"] for e in events if e.type == "message.delta")


async def start(api, content: str) -> dict:
    response = await api.post("/threads", json={"content": content})
    assert response.status_code == 202, response.text
    return response.json()


def test_the_stream_follows_a_run_to_its_end_with_the_answers_tokens(app):
    script(app, {"text": "Hello from the model, token by token.", "delay_ms": 40})

    async def follow():
        async with client(app) as api:
            started = await start(api, "say hello")
            async with EventStream(api, f"/threads/{started['thread']}/events") as stream:
                assert stream.response.headers["content-type"].startswith("text/event-stream")
                assert stream.response.headers["cache-control"] == "no-cache"
                assert stream.response.headers["x-accel-buffering"] == "no"
                return started, await stream.until("run.completed", "run.failed")

    started, events = asyncio.run(follow())

    assert events[0].type == "thread.snapshot" and events[0].seq == events[0].data["seq"]
    assert events[-1].type == "run.completed" and events[-1].data["run"] == started["run"]
    # Whatever the snapshot already held of the answer, and then the deltas: the model's whole text, once.
    streamed = [m for m in events[0].data["messages"] if m["role"] == "assistant"]
    held = streamed[-1]["content"] if streamed else ""
    assert held + deltas(events) == "Hello from the model, token by token."
    assert all(e.id == str(e.data["seq"]) for e in events if "seq" in e.data)


def test_a_client_that_disconnects_mid_answer_and_resumes_gets_every_token_exactly_once(app):
    script(app, {"text": LONG_ANSWER, "delay_ms": 15})

    async def disconnect_then_resume():
        async with client(app) as api:
            started = await start(api, "a long answer, please")
            url = f"/threads/{started['thread']}/events"
            async with EventStream(api, url) as first:
                seen = [await first.next()]
                while sum(e.type == "message.delta" for e in seen) < 5:
                    seen.append(await first.next())
                last_id = first.last_id
            # Gone mid-answer; back with the last id it got, as an EventSource reconnects.
            async with EventStream(api, url, headers={"Last-Event-ID": last_id}) as second:
                rest = await second.until("run.completed", "run.failed")
            return seen, last_id, rest

    seen, last_id, rest = asyncio.run(disconnect_then_resume())

    assert rest[-1].type == "run.completed"
    assert "thread.snapshot" not in [e.type for e in rest], "the log still held them: no snapshot, only the tail"
    assert rest[0].seq == int(last_id) + 1
    snapshot_text = "".join(m["content"] for m in seen[0].data["messages"] if m["role"] == "assistant")
    assert snapshot_text + deltas(seen) + deltas(rest) == LONG_ANSWER
    numbers = [e.seq for e in seen + rest if e.seq is not None]
    assert numbers == sorted(set(numbers)), "no event twice, none out of order"


def test_after_seq_in_the_query_resumes_as_last_event_id_does(app):
    script(app, {"text": "Short answer, slowly.", "delay_ms": 50})

    async def twice():
        async with client(app) as api:
            started = await start(api, "short")
            url = f"/threads/{started['thread']}/events"
            async with EventStream(api, url) as stream:
                events = await stream.until("run.completed")  # the answer is slow enough to be followed
            async with EventStream(api, f"{url}?after_seq={events[0].seq}") as again:
                return events, await again.until("run.completed")

    events, again = asyncio.run(twice())
    assert [e.data for e in again] == [e.data for e in events[1:]]


def test_an_idle_stream_sends_keep_alive_comments(app):
    # The run waits for an approval of current_time (tests/api/conftest.py): the stream stays open and nothing happens.
    script(app, {"tool_calls": [{"id": "call_idle_1", "name": "current_time", "arguments": {}}]}, {"text": "Done."})

    async def idle():
        async with client(app) as api:
            started = await start(api, "what time is it? then nothing")
            async with EventStream(api, f"/threads/{started['thread']}/events") as stream:
                waited = await stream.until_run_ends()
                # AGENTWEB_SSE_KEEPALIVE is 0.5 s here: waited for up to 10 s (a loaded machine holds the server back).
                await stream.until_comment("keep-alive", timeout=10)
                await api.post(f"/threads/{started['thread']}/stop")
                return waited

    waited = asyncio.run(idle())
    last = waited[-1]
    assert last.type == "run.waiting" or last.data["run"]["status"] == "waiting"


def test_a_bad_last_event_id_is_a_json_error(app):
    async def bad():
        async with client(app) as api:
            started = await start(api, "x")
            return await api.get(f"/threads/{started['thread']}/events", headers={"Last-Event-ID": "not-a-number"})

    script(app, {"text": "x"})
    response = asyncio.run(bad())
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"
