"""Whatever a client sends, a malformed frame gets an `error` event and the socket stays open (chat/frames.py)."""

import json

import pytest

from chat.models import Message, Thread

pytestmark = pytest.mark.django_db(transaction=True)

DEEP = 40_000

MALFORMED = {
    "type is a list": '{"type": ["ping"]}',
    "type is an object": '{"type": {"a": 1}}',
    "type is a number": '{"type": 1}',
    "type is null": '{"type": null}',
    "type is missing": '{"ref": "r"}',
    "a list, not an object": '["ping"]',
    "a string, not an object": '"ping"',
    "null, not an object": "null",
    "a list nested 40,000 deep": "[" * DEEP + "]" * DEEP,
    "an object nested 40,000 deep": '{"a":' * DEEP + "1" + "}" * DEEP,
    "a field nested 40,000 deep": '{"type": "ping", "x": ' + "[" * DEEP + "]" * DEEP + "}",
    "edited arguments nested 500 deep": json.dumps(
        {"type": "tool_call.decide", "tool_call": "1", "decision": "edit", "args": {"a": "["}}
    ).replace('"["', "[" * 500 + "]" * 500),
    "NaN": '{"type": "tool_call.decide", "tool_call": "1", "decision": "edit", "args": {"x": NaN}}',
    "Infinity": '{"type": "thread.subscribe", "thread": "1", "after_seq": -Infinity}',
    "a number with 5,000 digits": '{"type": "thread.subscribe", "thread": "1", "after_seq": ' + "9" * 5000 + "}",
    "a ref that is not a string": '{"type": "ping", "ref": ["r"]}',
}


@pytest.mark.parametrize("text", MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_malformed_frame_gets_an_error_and_the_socket_stays_open(connect, owner, text):
    client = await connect(owner)

    await client.send_raw(text)

    assert (await client.receive())["type"] == "error"
    await client.send(type="ping")
    assert await client.receive() == {"type": "pong"}


async def test_the_error_for_a_deeply_nested_frame_says_what_is_wrong(connect, owner):
    client = await connect(owner)

    await client.send_raw('{"type": "ping", "x": ' + "[" * DEEP + "]" * DEEP + "}")

    error = await client.receive()
    assert error["code"] == "bad_json"
    assert "nested" in error["message"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_are_not_json(connect, owner, constant):
    client = await connect(owner)

    await client.send_raw(
        '{"type": "tool_call.decide", "tool_call": "1", "decision": "edit", "args": {"x": ' + constant + "}}"
    )

    assert (await client.receive())["code"] == "bad_json"


async def test_a_message_nested_too_deep_writes_nothing(connect, owner):
    client = await connect(owner)

    await client.send_raw(
        '{"type": "message.send", "thread": null, "content": "hi", "client_msg_id": "'
        + "1" * 8
        + '-1111-1111-1111-111111111111", "x": '
        + "[" * 500
        + "]" * 500
        + "}"
    )

    assert (await client.receive())["code"] == "bad_frame"
    assert not await Thread.objects.aexists()
    assert not await Message.objects.aexists()


async def test_the_error_for_an_ill_typed_field_does_not_echo_the_whole_value(connect, owner):
    client = await connect(owner)

    await client.send(type="thread.subscribe", thread="t" * 50_000, after_seq=None)

    error = await client.receive()
    assert error["code"] == "bad_frame"
    assert len(error["message"]) < 1000
