"""Tools that talk back mid-call, through the real websocket: progress on the card, requests for the person's input
(accepted, declined, cancelled, refused, timed out, stopped, answered from another socket, shown again after a
reload), and image artifacts. The tools are in tests/support/tools_for_tests.py."""

import asyncio
import json

import pytest

from chat.models import Message, ToolCall
from tests.chat.test_runs_with_model_server import answer, calls
from tests.support.tools_for_tests import DETAILS_SCHEMA, SESSION_ANSWERS
from tools.models import bump_settings_stamp
from tools.registry import default_registry
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = {"name": "Ada", "email": "ada@example.org", "age": 36, "colour": "g", "newsletter": True}


@pytest.fixture(autouse=True)
def tools_for_tests(settings, db):
    settings.AGENTWEB_TOOL_MODULES = ["tests.support.tools_for_tests"]
    default_registry.cache_clear()
    sync_tool_settings()
    bump_settings_stamp()
    yield
    default_registry.cache_clear()


def of(events, kind):
    return [e for e in events if e["type"] == kind]


async def ask_details(client, model_server, purpose="the newsletter"):
    model_server.enqueue(calls(("c1", "ask_for_details", {"purpose": purpose})), answer("Thanks."))
    await client.ask("sign me up")
    events = await client.until("tool_call.input_requested")
    return events, events[-1]


def result_of(events):
    return json.loads(of(events, "tool_call.completed")[0]["content"])


# --- progress ------------------------------------------------------------------------------------------------


async def test_progress_reported_thousands_of_times_costs_a_few_frames(connect, owner, model_server):
    model_server.enqueue(calls(("c1", "count_up", {"to": 5000})), answer("Done."))
    client = await connect(owner)
    await client.ask("count")
    events = await client.run_to_end()
    kinds = [e["type"] for e in events]
    progress = of(events, "tool_call.progress")
    assert 1 <= len(progress) <= 10, len(progress)
    call = of(events, "tool_call.running")[0]["tool_call"]
    assert progress[0] == {**progress[0], "tool_call": call, "progress": 1, "total": 5000, "message": "counted 1"}
    assert [p["progress"] for p in progress] == sorted(p["progress"] for p in progress)  # the latest wins
    # All between the call's start and its result; never after it.
    assert kinds.index("tool_call.running") < kinds.index("tool_call.progress")
    assert max(i for i, k in enumerate(kinds) if k == "tool_call.progress") < kinds.index("tool_call.completed")
    assert of(events, "tool_call.completed")[0]["content"] == "counted to 5000"


async def test_a_slow_tools_progress_goes_out_as_it_goes(connect, owner, model_server, settings):
    settings.AGENTWEB_PROGRESS_WINDOW = 0.05
    model_server.enqueue(calls(("c1", "download_files", {"files": 4, "pause": 0.1})), answer("Done."))
    client = await connect(owner)
    await client.ask("download")
    events = await client.run_to_end()
    assert [(p["progress"], p["total"], p["message"]) for p in of(events, "tool_call.progress")] == [
        (n, 4, "Downloading") for n in range(4)
    ]
    assert not await ToolCall.objects.filter(result__contains="Downloading").aexists()  # never stored


# --- requests for input --------------------------------------------------------------------------------------


async def test_a_request_for_input_is_sent_with_its_form_and_an_accepted_answer_reaches_the_tool(
    connect,
    owner,
    model_server,
):
    client = await connect(owner)
    events, asked = await ask_details(client, model_server)
    call = of(events, "tool_call.running")[0]["tool_call"]
    assert asked["tool_call"] == call
    assert asked["message"] == "Please fill in your details for the newsletter."
    assert asked["schema"] == DETAILS_SCHEMA
    assert isinstance(asked["request"], str) and asked["request"]

    await asyncio.sleep(1.3)  # longer than the tool's timeout (1 s): the wait for a person does not count
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=call, request=asked["request"], action="accept",
        content=GOOD,
    )  # fmt: skip
    events = await client.run_to_end()
    answered = of(events, "tool_call.input_answered")
    assert answered == [
        {**answered[0], "tool_call": call, "request": asked["request"], "action": "accept", "by": "owner"}
    ]
    assert of(events, "tool_call.completed")[0]["status"] == "success"
    assert result_of(events) == {"action": "accept", "content": GOOD}
    assert events[-1]["type"] == "run.completed"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_or_cancelled_request_tells_the_tool_so(connect, owner, model_server, action):
    client = await connect(owner)
    _, asked = await ask_details(client, model_server)
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action=action,
    )  # fmt: skip
    events = await client.run_to_end()
    assert [e["action"] for e in of(events, "tool_call.input_answered")] == [action]
    assert result_of(events) == {"action": action, "content": None}


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ({"email": "ada@example.org"}, "'name' is a required property"),
        ({**GOOD, "email": "not an address"}, "email: is not a valid email"),
        ({**GOOD, "age": -1}, "age: -1 is less than the minimum of 0"),
        ({**GOOD, "age": 3.5}, "age: 3.5 is not of type 'integer'"),
        ({**GOOD, "colour": "blue"}, "colour:"),
        ({**GOOD, "size": "xl"}, "size: 'xl' is not one of"),
        ({**GOOD, "born": "yesterday"}, "born: is not a valid date"),
        ({**GOOD, "admin": True}, "names a field that was not asked for"),
    ],
)
async def test_an_answer_that_does_not_fit_the_form_is_refused_and_the_form_stays(
    connect,
    owner,
    model_server,
    content,
    named,
):
    client = await connect(owner)
    _, asked = await ask_details(client, model_server)
    frame = {"type": "tool_call.input", "thread": asked["thread"], "tool_call": asked["tool_call"]}
    await client.send(**frame, request=asked["request"], action="accept", content=content, ref="bad-1")
    error = await client.receive()
    assert (error["type"], error["code"], error["ref"]) == ("error", "invalid_input", "bad-1")
    assert named in error["message"]

    await client.send(**frame, request=asked["request"], action="accept", content=GOOD)  # still open
    events = await client.run_to_end()
    assert result_of(events)["action"] == "accept"


async def test_accept_without_content_is_a_bad_frame(connect, owner, model_server):
    client = await connect(owner)
    _, asked = await ask_details(client, model_server)
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action="accept",
    )  # fmt: skip
    error = await client.receive()
    assert error["code"] == "bad_frame" and "content" in error["message"]


async def test_an_unanswered_request_is_cancelled_after_the_input_timeout(connect, owner, model_server, settings):
    settings.AGENTWEB_INPUT_TIMEOUT = 0.3
    client = await connect(owner)
    _, asked = await ask_details(client, model_server)
    events = await client.run_to_end()
    answered = of(events, "tool_call.input_answered")
    assert [(a["request"], a["action"], a["by"]) for a in answered] == [(asked["request"], "cancel", None)]
    assert result_of(events) == {"action": "cancel", "content": None}
    # Too late now.
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action="decline",
    )  # fmt: skip
    assert (await client.receive())["code"] == "not_found"


async def test_stop_while_the_form_is_open_cancels_the_request_and_the_call(connect, owner, model_server):
    client = await connect(owner)
    _, asked = await ask_details(client, model_server)
    await client.send(type="run.cancel", thread=asked["thread"])
    events = await client.run_to_end()
    assert [(e["type"], e.get("action") or e.get("status")) for e in events if e["type"].startswith("tool_call")] == [
        ("tool_call.input_answered", "cancel"),
        ("tool_call.completed", "cancelled"),
    ]
    assert events[-1]["type"] == "run.cancelled"
    assert (await ToolCall.objects.aget()).status == "cancelled"


async def test_stop_cancels_a_request_made_from_another_task_than_the_calls(connect, owner, model_server):
    # An MCP client asks from its session's task: Stop cancels the call's task, and the request is closed by the run.
    SESSION_ANSWERS.clear()
    model_server.enqueue(calls(("c1", "ask_like_an_mcp_client", {})), answer("ok"))
    client = await connect(owner)
    await client.ask("go")
    asked = (await client.until("tool_call.input_requested"))[-1]
    await asyncio.sleep(1.2)  # past the tool's timeout (1 s): the wait does not count, from that task either
    await client.send(type="run.cancel", thread=asked["thread"])
    events = await client.run_to_end()
    assert [(e["type"], e.get("action") or e.get("status")) for e in events if e["type"].startswith("tool_call")] == [
        ("tool_call.input_answered", "cancel"),
        ("tool_call.completed", "cancelled"),
    ]
    assert events[-1]["type"] == "run.cancelled"
    await asyncio.sleep(0)
    assert [a.action for a in SESSION_ANSWERS] == ["cancel"]


async def test_a_request_made_from_another_task_is_answered_like_any(connect, owner, model_server):
    model_server.enqueue(calls(("c1", "ask_like_an_mcp_client", {})), answer("ok"))
    client = await connect(owner)
    await client.ask("go")
    asked = (await client.until("tool_call.input_requested"))[-1]
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action="accept", content={},
    )  # fmt: skip
    events = await client.run_to_end()
    assert [(e["status"], e["content"]) for e in of(events, "tool_call.completed")] == [("success", "accept")]


async def test_a_second_socket_answers_and_every_tab_closes_the_form_first_answer_wins(
    connect,
    owner,
    model_server,
):
    first = await connect(owner)
    _, asked = await ask_details(first, model_server)
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=asked["thread"], after_seq=asked["seq"] - 1)
    [seen] = await second.until("tool_call.input_requested")
    assert seen == asked

    frame = {"type": "tool_call.input", "thread": asked["thread"], "tool_call": asked["tool_call"]}
    await second.send(**frame, request=asked["request"], action="decline")
    for client in (first, second):
        answered = (await client.until("tool_call.input_answered"))[-1]
        assert (answered["action"], answered["by"]) == ("decline", "owner")
    await first.send(**frame, request=asked["request"], action="accept", content=GOOD, ref="late")
    events = await first.until("error", "run.completed")
    assert [(e["code"], e["ref"]) for e in of(events, "error")] == [("not_found", "late")]
    if events[-1]["type"] != "run.completed":
        events = await first.run_to_end()
    assert (await Message.objects.aget(role="tool")).content == json.dumps({"action": "decline", "content": None})


async def test_a_tab_that_loads_while_the_form_is_open_shows_it_again(connect, owner, model_server):
    client = await connect(owner)
    _, asked = await ask_details(client, model_server)
    reloaded = await connect(owner)
    await reloaded.send(type="thread.subscribe", thread=asked["thread"], after_seq=None)
    # The snapshot, then the streaming step rebuilt from the thread's log: its call, running, and the form it asks.
    shown = await reloaded.until("tool_call.input_requested")
    assert shown[0]["type"] == "thread.snapshot"
    assert [e["tool_call"] for e in of(shown, "tool_call.running")] == [asked["tool_call"]]
    form = shown[-1]
    assert {key: form[key] for key in ("tool_call", "request", "message", "schema")} == {
        "tool_call": asked["tool_call"],
        "request": asked["request"],
        "message": "Please fill in your details for the newsletter.",
        "schema": DETAILS_SCHEMA,
    }
    await reloaded.send(
        type="tool_call.input", thread=asked["thread"], tool_call=form["tool_call"], request=asked["request"],
        action="accept", content=GOOD,
    )  # fmt: skip
    events = await reloaded.run_to_end()
    assert result_of(events)["content"] == GOOD

    again = await connect(owner)  # once answered, a loaded page has no form
    await again.send(type="thread.subscribe", thread=asked["thread"], after_seq=None)
    snapshot = (await again.until("thread.snapshot"))[-1]
    assert all("input_request" not in c for m in snapshot["messages"] for c in m.get("tool_calls", []))


async def test_another_person_cannot_answer(connect, owner, stranger, model_server):
    client = await connect(owner)
    _, asked = await ask_details(client, model_server)
    intruder = await connect(stranger)
    await intruder.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action="accept", content=GOOD,
    )  # fmt: skip
    assert (await intruder.receive())["code"] == "not_found"
    await client.send(type="run.cancel", thread=asked["thread"])
    await client.run_to_end()


async def test_a_wrong_request_id_is_not_found(connect, owner, model_server):
    client = await connect(owner)
    _, asked = await ask_details(client, model_server)
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request="nope", action="cancel",
    )  # fmt: skip
    assert (await client.receive())["code"] == "not_found"
    await client.send(type="run.cancel", thread=asked["thread"])
    await client.run_to_end()


# --- image artifacts -----------------------------------------------------------------------------------------


async def test_an_image_artifact_is_kept_and_its_shown_images_counted(connect, owner, model_server):
    model_server.enqueue(calls(("c1", "draw_square", {"size": 8})), answer("A square."))
    client = await connect(owner)
    await client.ask("draw")
    events = await client.run_to_end()
    completed = of(events, "tool_call.completed")[0]
    # One PNG of the four image blocks: an SVG and a block that is not base64 are not shown.
    assert (completed["has_artifact"], completed["images"]) == (True, 1)
    stored = (await Message.objects.aget(role="tool")).artifact
    assert stored["structuredContent"] == {"side": 8, "colour": "red"}
    assert [b["type"] for b in stored["content"]] == ["text", "image", "image", "image", "resource"]


async def test_a_plain_result_says_nothing_of_images(connect, owner, model_server):
    model_server.enqueue(calls(("c1", "sales_report", {"region": "north"})), answer("ok"))
    client = await connect(owner)
    await client.ask("report")
    completed = of(await client.run_to_end(), "tool_call.completed")[0]
    assert completed["has_artifact"] is True
    assert "images" not in completed
