"""The plain-Python parts of tools that talk back mid-call: the requested schema and the answer's check
(tools/elicitation.py), which images of an artifact are shown (tools/artifacts.py), the paused deadline
(tools/executor.py) and the progress throttle (chat/runs/interaction.py)."""

import asyncio
import base64
from typing import Annotated

import pytest

from chat.runs.interaction import LatestValue
from tests.support.tools_for_tests import DETAILS_SCHEMA, square_png
from tools import tool
from tools.artifacts import MAX_IMAGE_BYTES, shown_images
from tools.context import ElicitationAnswer, ToolContext
from tools.elicitation import InvalidRequest, check_requested_schema, content_problems
from tools.executor import execute_tool
from tools.injection import InjectedContext
from tools.registry import ToolRegistry

# --- the requested schema ---------------------------------------------------------------------------------------


def test_a_flat_schema_of_every_kind_is_accepted_as_it_is():
    assert check_requested_schema(DETAILS_SCHEMA) == DETAILS_SCHEMA


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ([], "must be a JSON object"),
        ({"type": "array"}, '"type": "object"'),
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "type 'object'"),
        ({"type": "object", "properties": {"a": {"type": "array", "items": {}}}}, "type 'array'"),
        ({"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}}, "format 'ipv4'"),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, "required"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": []}}}, "non-empty"),
        ({"type": "object", "properties": {"a": {"type": "string", "oneOf": [{"title": "x"}]}}}, "oneOf"),
        ({"type": "object", "properties": {"a": {"type": "string", "minLength": "2"}}}, "not a valid JSON Schema"),
        ({"type": "object", "properties": {"a": {"type": "number", "minimum": float("nan")}}}, "not JSON"),
    ],
)
def test_a_schema_a_form_cannot_show_is_refused_saying_why(schema, says):
    with pytest.raises(InvalidRequest) as refused:
        check_requested_schema(schema)
    assert says in str(refused.value)
    assert isinstance(refused.value, ValueError)


def test_an_answer_is_checked_against_the_schema_with_every_problem_named():
    good = {"name": "Ada", "email": "ada@example.org", "born": "1815-12-10"}
    assert content_problems(DETAILS_SCHEMA, good) == []
    problems = content_problems(DETAILS_SCHEMA, {"name": "A", "email": "ada", "born": "1815-13-40", "x": 1})
    assert problems == [
        "born: is not a valid date",
        "email: is not a valid email",
        "name: 'A' is too short",
        "names a field that was not asked for",
    ]
    assert content_problems(DETAILS_SCHEMA, ["not", "an", "object"]) == [
        "the answer must be an object of the requested fields"
    ]


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("email", "a@b.example", "a@"),
        ("uri", "https://example.org/x?y", "not a uri"),
        ("date", "2025-02-28", "2025-02-30"),
        ("date-time", "2025-03-01T10:30:00+01:00", "2025-03-01 10:30"),
        ("date-time", "2025-03-01T10:30:00.5Z", "2025-03-01T25:30:00Z"),
    ],
)
def test_the_formats_mcp_names_are_checked(fmt, good, bad):
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    assert content_problems(schema, {"v": good}) == []
    assert content_problems(schema, {"v": bad}) == [f"v: is not a valid {fmt}"]


# --- images --------------------------------------------------------------------------------------------------


def block(mime, data):
    return {"type": "image", "mimeType": mime, "data": data}


def test_only_real_images_of_the_four_types_within_the_cap_are_shown():
    png = square_png(4)
    encoded = base64.b64encode(png).decode()
    gif = base64.b64encode(b"GIF89a" + b"\0" * 20).decode()
    artifact = {
        "content": [
            {"type": "text", "text": "hi"},
            block("image/png", encoded),
            block("image/gif", gif),
            block("image/svg+xml", base64.b64encode(b"<svg onload=alert(1)/>").decode()),
            block("image/jpeg", encoded),  # a PNG that says it is a JPEG
            block("image/png", "a" + encoded),  # not base64
            block("image/png", base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * MAX_IMAGE_BYTES).decode()),
        ]
    }
    assert [mime for mime, _ in shown_images(artifact)] == ["image/png", "image/gif"]
    assert shown_images(artifact)[0][1] == png
    assert shown_images({"rows": [1, 2]}) == []
    assert shown_images([block("image/png", encoded)]) == []


# --- the deadline, paused while a person is asked --------------------------------------------------------------


@tool(timeout=0.3)
async def asks(context: Annotated[ToolContext, InjectedContext]) -> str:
    """Asks, then works a little (within what is left of its deadline only if the wait did not count)."""
    answer = await context.elicit("ok?", {"type": "object", "properties": {}})
    await asyncio.sleep(0.2)
    return answer.action


@tool(timeout=0.3)
async def asks_then_hangs(context: Annotated[ToolContext, InjectedContext]) -> str:
    """Asks, then hangs."""
    await context.elicit("ok?", {"type": "object", "properties": {}})
    await asyncio.sleep(5)
    return "never"


TOOLS = ToolRegistry([asks, asks_then_hangs])


async def test_the_time_a_person_takes_does_not_count_against_the_tools_timeout():
    async def slow_person(message, schema):
        await asyncio.sleep(0.5)  # longer than the whole timeout
        return ElicitationAnswer("accept", {})

    result = await execute_tool(TOOLS, "asks", {}, context=ToolContext(elicit=slow_person))
    assert (result.status, result.content) == ("success", "accept")


async def test_the_rest_of_the_call_still_has_its_deadline():
    async def quick(message, schema):
        return ElicitationAnswer("decline")

    result = await execute_tool(TOOLS, "asks_then_hangs", {}, context=ToolContext(elicit=quick))
    assert result.status == "error" and "timed out after 0.3 s" in result.content


# --- the progress throttle -------------------------------------------------------------------------------------


async def test_progress_sends_the_first_value_at_once_then_the_latest_per_window():
    sent = []

    async def send(key, value):
        sent.append((key, value))

    throttle = LatestValue(send, window=0.05)
    for n in range(1000):
        await throttle.push("a", n)
    await throttle.push("b", 0)
    assert sent == [("a", 0), ("b", 0)]
    await asyncio.sleep(0.1)
    assert sent == [("a", 0), ("b", 0), ("a", 999)]
    await throttle.push("a", 1000)  # a window has passed: at once
    await throttle.push("a", 1001)
    throttle.forget("a")  # the call ended: what is pending is dropped
    await asyncio.sleep(0.1)
    assert sent[3:] == [("a", 1000)]


async def test_progress_after_the_run_ended_is_told_nobody():
    sent = []

    async def send(key, value):
        sent.append((key, value))

    throttle = LatestValue(send, window=0.05)
    await throttle.push("a", 0)
    throttle.discard()
    await throttle.push("b", 0)
    await throttle.push("a", 1)
    await asyncio.sleep(0.1)
    assert sent == [("a", 0)]
