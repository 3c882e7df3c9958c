import datetime

import pytest
from django.test import Client

from chat.models import Message, Run, Thread, ToolCall
from sharing import services

STARTED = datetime.datetime(2025, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)


def add_message(thread: Thread, role: str, content: str, **fields) -> Message:
    order = thread.messages.count() + 1
    return Message.objects.create(thread=thread, order=order, role=role, content=content, **fields)


@pytest.fixture
def thread(owner):
    """The owner's finished turn: a question, a calculator call with its result, the answer."""
    thread = Thread.objects.create(owner=owner, title="What is 23*19?")
    run = Run.objects.create(
        thread=thread, status="completed", reason="done", steps=2, model_label="Demo model", finished_at=STARTED
    )
    add_message(thread, "user", "what is 23*19?", run=run)
    asking = add_message(thread, "assistant", "Let me work that out.", run=run, finish_reason="tool_calls")
    ToolCall.objects.create(
        message=asking,
        call_id="call_abc",
        name="calculator",
        args={"expression": "23*19"},
        status="success",
        result="437",
        started_at=STARTED,
        finished_at=STARTED + datetime.timedelta(milliseconds=12),
        duration_ms=12,
    )
    add_message(thread, "tool", "437", run=run, tool_call_id="call_abc", name="calculator")
    add_message(thread, "assistant", "23*19 = 437.", run=run, finish_reason="stop")
    return thread


@pytest.fixture
def as_owner(owner):
    client = Client()
    client.force_login(owner)
    return client


@pytest.fixture
def as_stranger(stranger):
    client = Client()
    client.force_login(stranger)
    return client


@pytest.fixture
def anonymous():
    return Client()


@pytest.fixture
def share(thread):
    """Shares `thread` with the default options; returns (link, token)."""

    def make(**options):
        created = services.create_link(thread=thread, **options)
        return created.link, created.token

    return make
