"""The run API (/api/v1/) as a program uses it, against the real server (tests/api/conftest.py): threads, messages that
start runs, decisions, follow-ups, versions; a person sees only their own; a key and nothing else lets a program in."""

import asyncio
import uuid

import httpx
import pytest

from tests.api.conftest import SEND_BURST, client, cookie_of, script
from tests.support.sse import EventStream

ENDPOINTS = {
    ("get", "/api/v1/threads"),
    ("post", "/api/v1/threads"),
    ("get", "/api/v1/threads/{thread_id}"),
    ("post", "/api/v1/threads/{thread_id}/messages"),
    ("get", "/api/v1/threads/{thread_id}/events"),
    ("post", "/api/v1/threads/{thread_id}/stop"),
    ("post", "/api/v1/threads/{thread_id}/retry"),
    ("post", "/api/v1/threads/{thread_id}/continue"),
    ("post", "/api/v1/threads/{thread_id}/regenerate"),
    ("post", "/api/v1/threads/{thread_id}/input"),
    ("post", "/api/v1/tool-calls/{tool_call_id}/decide"),
    ("post", "/api/v1/messages/{message_id}/edit"),
    ("post", "/api/v1/messages/{message_id}/switch-version"),
}


def run(coroutine):
    return asyncio.run(coroutine)


async def send_and_finish(api, content: str, thread: str = "new") -> tuple[dict, dict]:
    """Send a message, follow the thread's events until its run no longer runs; the send's answer and the thread as
    it then reads (GET /threads/{id})."""
    response = await api.post(f"/threads/{thread}/messages", json={"content": content})
    assert response.status_code == 202, response.text
    started = response.json()
    await run_ends(api, started["thread"])
    return started, (await api.get(f"/threads/{started['thread']}")).json()


async def run_ends(api, thread: str) -> None:
    async with EventStream(api, f"/threads/{thread}/events") as stream:
        await stream.until_run_ends()


def waiting_call(snapshot: dict) -> str:
    calls = [c for m in snapshot["messages"] for c in m.get("tool_calls", []) if c["status"] == "awaiting_approval"]
    return calls[-1]["id"]


def error_of(response: httpx.Response) -> tuple[int, str]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    return response.status_code, body["error"]["code"]


def test_a_message_starts_a_run_and_the_thread_reads_back_as_the_chat_shows_it(app):
    script(app, {"text": "Forty-two."})

    async def converse():
        async with client(app) as api:
            started, _ = await send_and_finish(api, "the answer?")
            read = await api.get(f"/threads/{started['thread']}")
            listed = await api.get("/threads", params={"limit": 100})
            return started, read, listed

    started, read, listed = run(converse())

    assert started["created_thread"] is True and isinstance(started["message"], int) and started["run"]
    snapshot = read.json()
    assert read.status_code == 200 and snapshot["type"] == "thread.snapshot"
    assert snapshot["run"]["status"] == "completed"
    assert [(m["role"], m["content"]) for m in snapshot["messages"]] == [
        ("user", "the answer?"),
        ("assistant", "Forty-two."),
    ]
    assert snapshot["messages"][0]["id"] == started["message"] and snapshot["run"]["id"] == started["run"]
    mine = [t for t in listed.json()["threads"] if t["id"] == started["thread"]]
    assert mine and mine[0]["source"] == "api" and mine[0]["title"] == "the answer?"


def test_threads_are_listed_newest_first_a_page_at_a_time(app):
    script(app, {"text": "one"}, {"text": "two"}, {"text": "three"})

    async def three_then_pages():
        async with client(app) as api:
            made = [(await send_and_finish(api, f"thread {i}"))[0]["thread"] for i in range(3)]
            first = (await api.get("/threads", params={"limit": 2})).json()
            second = (await api.get("/threads", params={"limit": 2, "offset": first["next_offset"]})).json()
            too_many = await api.get("/threads", params={"limit": 101})
            return made, first, second, too_many

    made, first, second, too_many = run(three_then_pages())
    assert [t["id"] for t in first["threads"]] == made[::-1][:2] and first["next_offset"] == 2
    assert second["threads"][0]["id"] == made[0]
    assert error_of(too_many) == (400, "bad_request")


def test_a_new_thread_takes_the_given_title(app):
    script(app, {"text": "ok"})

    async def titled():
        async with client(app) as api:
            response = await api.post("/threads", json={"content": "hello", "title": "  My   script's chat "})
            return (await api.get(f"/threads/{response.json()['thread']}")).json()

    assert run(titled())["title"] == "My script's chat"


def test_a_tool_call_waiting_for_approval_is_decided_through_the_api(app):
    script(
        app,
        {"tool_calls": [{"id": "call_api_1", "name": "current_time", "arguments": {}}]},
        {"text": "It is now."},
    )

    async def approve():
        async with client(app) as api:
            started, waiting = await send_and_finish(api, "what time is it?")
            call = waiting_call(waiting)
            async with EventStream(api, f"/threads/{started['thread']}/events") as stream:
                await stream.next()  # the snapshot: the call waits
                decided = await api.post(f"/tool-calls/{call}/decide", json={"decision": "approve"})
                rest = await stream.until("run.completed", "run.failed")
            again = await api.post(f"/tool-calls/{call}/decide", json={"decision": "approve"})
            return waiting, decided, rest, again

    waiting, decided, rest, again = run(approve())
    assert waiting["run"]["status"] == "waiting"
    assert decided.status_code == 200 and decided.json() == {"resumed": True}
    assert [(e.data["status"]) for e in rest if e.type == "tool_call.completed"] == ["success"]
    assert rest[-1].type == "run.completed"
    assert error_of(again) == (409, "already_decided")


def test_a_failed_run_is_retried_and_a_completed_one_cannot_be_continued(app):
    script(app, {"status": 500, "body": {"error": {"message": "boom"}}}, {"text": "Second time lucky."})

    async def fail_then_retry():
        async with client(app) as api:
            started, failed = await send_and_finish(api, "try")
            thread = started["thread"]
            retried = await api.post(f"/threads/{thread}/retry")
            await run_ends(api, thread)
            continued = await api.post(f"/threads/{thread}/continue", json={"steps": 3})
            stopped = await api.post(f"/threads/{thread}/stop")
            return failed, retried, continued, stopped

    failed, retried, continued, stopped = run(fail_then_retry())
    assert failed["run"]["status"] == "failed"
    assert retried.status_code == 202 and retried.json()["run"]
    assert error_of(continued) == (409, "not_allowed")
    assert error_of(stopped) == (409, "no_active_run")


def test_a_running_answer_is_stopped(app):
    script(app, {"text": " ".join(["slow"] * 200), "delay_ms": 30})

    async def stop_it():
        async with client(app) as api:
            started = (await api.post("/threads", json={"content": "talk slowly"})).json()
            async with EventStream(api, f"/threads/{started['thread']}/events") as stream:
                await stream.until("message.delta")
                stopped = await api.post(f"/threads/{started['thread']}/stop")
                return stopped, await stream.until("run.cancelled", "run.completed")

    stopped, events = run(stop_it())
    assert stopped.json() == {"stopped": True} and events[-1].type == "run.cancelled"


def test_an_answer_is_regenerated_and_the_first_version_shown_again(app):
    script(app, {"text": "First answer."}, {"text": "Second answer."})

    async def versions():
        async with client(app) as api:
            started, _ = await send_and_finish(api, "answer twice")
            thread = started["thread"]
            regenerated = await api.post(f"/threads/{thread}/regenerate")
            await run_ends(api, thread)
            answer = (await api.get(f"/threads/{thread}")).json()["messages"][-1]
            first = answer["versions"]["ids"][0]
            switched = await api.post(f"/messages/{answer['id']}/switch-version", json={"to": first})
            return regenerated, answer, switched

    regenerated, answer, switched = run(versions())
    assert regenerated.status_code == 202
    assert answer["content"] == "Second answer." and answer["versions"]["count"] == 2
    assert switched.status_code == 200 and switched.json()["messages"][-1]["content"] == "First answer."


def test_an_answer_to_a_request_for_input_that_is_not_open_is_refused(app):
    script(app, {"text": "nothing asked"})

    async def answer():
        async with client(app) as api:
            started, _ = await send_and_finish(api, "no tool")
            body = {"tool_call": str(uuid.uuid4()), "request": "0" * 32, "action": "decline"}
            return await api.post(f"/threads/{started['thread']}/input", json=body)

    assert error_of(run(answer())) == (404, "not_found")


def test_the_openapi_schema_lists_every_endpoint(app):
    schema = httpx.get(f"{app['base_url']}/api/v1/openapi.json").json()
    listed = {(method, path) for path, operations in schema["paths"].items() for method in operations}
    assert listed == ENDPOINTS
    assert schema["components"]["securitySchemes"]["KeyBearer"] == {"type": "http", "scheme": "bearer"}


# --- a person's own only -------------------------------------------------------------------------------------------


def test_another_persons_thread_is_not_found_as_a_random_one_is(app):
    script(app, {"tool_calls": [{"id": "call_api_s", "name": "current_time", "arguments": {}}]})

    async def look():
        async with client(app) as api:
            started, waiting = await send_and_finish(api, "mine")
        call = waiting_call(waiting)
        thread, message = started["thread"], started["message"]
        async with client(app, "stranger") as other:
            tries = [
                await other.get(f"/threads/{thread}"),
                await other.get(f"/threads/{thread}/events"),
                await other.post(f"/threads/{thread}/messages", json={"content": "mine now"}),
                await other.post(f"/threads/{thread}/stop"),
                await other.post(f"/threads/{thread}/retry"),
                await other.post(f"/tool-calls/{call}/decide", json={"decision": "approve"}),
                await other.post(f"/messages/{message}/switch-version", json={"to": message}),
                await other.post(f"/messages/{message}/edit", json={"content": "x"}),
                await other.get(f"/threads/{uuid.uuid4()}"),
                await other.get("/threads/not-a-uuid"),
            ]
            listed = (await other.get("/threads")).json()["threads"]
        async with client(app) as api:
            await api.post(f"/threads/{thread}/stop")  # the run that waits for a decision
        return tries, listed, thread

    tries, listed, thread = run(look())
    assert [error_of(response) for response in tries] == [(404, "not_found")] * len(tries)
    assert thread not in [t["id"] for t in listed]


# --- a key, and only a key -----------------------------------------------------------------------------------------


def test_a_session_cookie_is_never_taken_for_a_key(app):
    cookie = cookie_of(app)
    with httpx.Client(base_url=f"{app['base_url']}/api/v1", headers={"Cookie": cookie}) as browser:
        listed = browser.get("/threads")
        sent = browser.post("/threads", json={"content": "from a page"})
    assert error_of(listed) == (401, "unauthorized") and error_of(sent) == (401, "unauthorized")
    assert listed.headers["content-type"] == "application/json; charset=utf-8"


@pytest.mark.parametrize("key", ["", "Bearer aw-not-a-key", "revoked", "Basic YWRhOmxvdmVsYWNl"])
def test_a_missing_unknown_or_revoked_key_gets_401_json(app, key):
    header = f"Bearer {app['keys']['revoked']}" if key == "revoked" else key
    response = httpx.get(f"{app['base_url']}/api/v1/threads", headers={"Authorization": header} if header else {})
    assert error_of(response) == (401, "unauthorized")
    if key == "revoked":
        assert response.json()["error"]["message"] == "This API key has been revoked."


def test_a_key_needs_no_csrf_token_even_beside_a_session_cookie(app):
    script(app, {"text": "no token needed"})
    cookie = cookie_of(app)

    async def post():
        async with client(app, headers={"Cookie": cookie, "Origin": "http://elsewhere.example"}) as api:
            return await api.post("/threads", json={"content": "posted without a CSRF token"})

    response = run(post())
    assert response.status_code == 202, response.text


# --- limits and bad input ------------------------------------------------------------------------------------------


def test_the_send_limit_applies_to_a_keys_person(app):
    async def flood():
        async with client(app, "hasty") as api:
            # Each send takes a token before its thread is looked up: refused ones cost no model request.
            codes = []
            for _ in range(SEND_BURST + 2):
                response = await api.post(f"/threads/{uuid.uuid4()}/messages", json={"content": "again"})
                codes.append(error_of(response))
            return codes

    codes = run(flood())
    assert codes[:SEND_BURST] == [(404, "not_found")] * SEND_BURST
    assert codes[-1] == (429, "rate_limited")


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (b"{not json", "application/json", (400, "bad_request")),
        (b'{"content": "   "}', "application/json", (400, "bad_frame")),
        (b"{}", "application/json", (400, "bad_request")),
        (b'{"content": 42}', "application/json", (400, "bad_request")),
        (b'{"content": "a\\u0000b"}', "application/json", (400, "bad_frame")),
        (b'{"content": "x", "model": "no-such-model"}', "application/json", (404, "not_found")),
        (b'{"content": "x", "agent": "no-such-agent"}', "application/json", (404, "not_found")),
        (b'{"content": "x"}', "text/plain", (415, "unsupported_media_type")),
        (b"content=x", "application/x-www-form-urlencoded", (415, "unsupported_media_type")),
        (b'{"content": "%s"}' % (b"x" * 300_000), "application/json", (413, "payload_too_large")),
    ],
)
def test_bad_input_is_a_clear_4xx_and_writes_nothing(app, body, content_type, expected):
    async def send():
        async with client(app, "stranger") as api:
            before = (await api.get("/threads", params={"limit": 100})).json()["threads"]
            response = await api.post("/threads", content=body, headers={"Content-Type": content_type})
            after = (await api.get("/threads", params={"limit": 100})).json()["threads"]
            return response, before, after

    response, before, after = run(send())
    assert error_of(response) == expected
    assert after == before


@pytest.mark.parametrize("chunked", [False, True], ids=["announced", "chunked"])
def test_a_body_over_the_request_limit_is_refused_before_it_is_read_in_the_apis_shape(app, chunked):
    body = b"x" * (20 * 1024 * 1024)
    response = httpx.post(
        f"{app['base_url']}/api/v1/threads",
        content=iter([body]) if chunked else body,  # an iterator: no Content-Length, refused as it arrives
        headers={"Authorization": f"Bearer {app['keys']['stranger']}", "Content-Type": "application/json"},
    )
    assert error_of(response) == (413, "payload_too_large")
    assert "at most 1.0 MB" in response.json()["error"]["message"]
