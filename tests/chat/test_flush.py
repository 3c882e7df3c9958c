"""The text of streaming answers written while they stream (chat/flush.py): what a tab was shown is in the database
within AGENTWEB_FLUSH_INTERVAL, for every answer of the process in one statement, and an answer that ended is left
as its end wrote it."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chat import store
from chat.models import Message
from tests.support.model_server import SSEResponse, openai_sse_body

pytestmark = pytest.mark.django_db(transaction=True)


def slow_answer(text: str, delay: float) -> SSEResponse:
    body = openai_sse_body(text=text)
    pieces = [(event + "\n\n").encode() for event in body.split("\n\n") if event]
    return SSEResponse(body, pieces=pieces, delay=delay)


async def test_an_answer_streaming_longer_than_the_interval_is_in_the_database_while_it_streams(
    connect, owner, model_server
):
    """With the default interval (a couple of seconds): a server killed now would keep that text."""
    answer = " ".join(f"word{n}" for n in range(250))  # 3-character pieces 20 ms apart: about 10 s
    model_server.enqueue(slow_answer(answer, 0.02))
    client = await connect(owner)
    await client.ask("hi")
    shown, stored = "", ""
    while not stored:  # until the flush has written some of it (run_to_end's timeout bounds the wait)
        event = await client.receive()
        assert event["type"] not in ("run.completed", "run.failed"), "the answer ended before any of it was written"
        shown += event.get("text", "") if event["type"] == "message.delta" else ""
        message = await Message.objects.filter(role=Message.Role.ASSISTANT).afirst()
        stored = message.content if message is not None else ""
    assert message.status == Message.Status.STREAMING
    assert shown.startswith(stored)  # what the tab was shown, never more
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    await message.arefresh_from_db()
    assert (message.content, message.status) == (answer, Message.Status.COMPLETE)


def three_answers(owner) -> list[int]:
    ids = []
    for _ in range(3):
        turn = store.start_turn(user=owner, thread_id=None, content="hi", client_msg_id=uuid.uuid4())
        ids.append(store.create_assistant_message(thread_id=turn.thread.pk, run_id=turn.run.pk))
    return ids


def test_the_streaming_answers_are_written_in_one_statement_and_an_ended_one_is_left_alone(owner):
    first, second, ended = three_answers(owner)
    store.complete_assistant_message(message_id=ended, content="The whole answer.", status="complete")

    with CaptureQueriesContext(connection) as statements:
        store.save_streaming_texts(texts={first: "Half an", second: "Once upon", ended: "The whole"})

    assert len(statements) == 1
    contents = dict(Message.objects.filter(pk__in=[first, second, ended]).values_list("pk", "content"))
    assert contents == {first: "Half an", second: "Once upon", ended: "The whole answer."}
