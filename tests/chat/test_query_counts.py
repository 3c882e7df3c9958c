"""The SQL statements of a turn: a count, not a time. It does not grow with the answer's length (its number of
tokens), and a turn stays under 20 (issue #7, bench db-per-message)."""

import threading

import pytest
from django.db.backends.utils import CursorWrapper

from chat.models import Thread
from tests.chat.test_runs_with_model_server import answer, calls

pytestmark = pytest.mark.django_db(transaction=True)

# A turn (3 tool calls, two model requests) stays under this many statements, whatever its answer's length: the
# text is written when the answer ends, not per token (chat/recorder.py). Not a pinned figure: a statement more for
# code that reads plainly is fine; a count that grows with the answer, or creeps toward this, is not.
UNDER = 20


class Statements:
    """Every statement Django executes, in any thread (the ORM runs on database_sync_to_async's thread)."""

    def __init__(self, monkeypatch):
        self.sql: list[str] = []
        self.lock = threading.Lock()
        original = CursorWrapper._execute_with_wrappers

        def counted(cursor, sql, params, many, executor):
            with self.lock:
                self.sql.append(sql)
            return original(cursor, sql, params, many, executor)

        monkeypatch.setattr(CursorWrapper, "_execute_with_wrappers", counted)

    def take(self) -> list[str]:
        with self.lock:
            taken, self.sql = self.sql, []
        return taken


async def turn(client, thread, model_server, text):
    three = [(f"c{i}", "calculator", {"expression": f"{i}+1"}) for i in range(3)]
    model_server.enqueue(calls(*three), answer(text))
    await client.ask("count", thread=thread)
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert [e["content"] for e in events if e["type"] == "tool_call.completed"] == ["1", "2", "3"]
    return events


async def test_a_turns_statements_do_not_grow_with_the_answers_length(
    connect, owner, model_server, monkeypatch, settings
):
    # The crash-safety flush (chat/flush.py) writes a streaming answer once per interval of time, whatever its length:
    # on a loaded machine the long answer here can stream past one. tests/chat/test_flush.py holds that to its own
    # rules; here only what grows with the length is counted.
    settings.AGENTWEB_FLUSH_INTERVAL = 3600
    client = await connect(owner)
    model_server.enqueue(answer("hello"))
    await client.ask("hi")
    first = await client.run_to_end()
    assert first[-1]["type"] == "run.completed"
    thread = str((await Thread.objects.aget(owner=owner)).pk)
    # A second turn on the thread fills what a process keeps per settings stamp (its tools, the model's
    # configuration), as any process's turns after its first do.
    model_server.enqueue(answer("hello again"))
    await client.ask("hi again", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    statements = Statements(monkeypatch)
    await turn(client, thread, model_server, "short answer. " * 10)
    short = statements.take()
    await turn(client, thread, model_server, "a much longer answer. " * 2000)
    long = statements.take()
    assert len(short) == len(long), (short, long)
    assert len(short) < UNDER, f"{len(short)} statements:\n" + "\n".join(short)


async def test_a_thread_with_an_agent_costs_no_more_statements(connect, owner, model_server, monkeypatch):
    """The thread's agent is kept per settings stamp (agents/services.py agent_spec): read with nothing."""
    from channels.db import database_sync_to_async

    from agents.models import Agent

    await database_sync_to_async(Agent.objects.create)(name="Counter", slug="counter", step_limit=10)
    client = await connect(owner)
    counts = []
    for agent in (None, "counter"):
        model_server.enqueue(answer("hello"))
        await client.ask("hi", agent=agent)
        first = await client.run_to_end()
        thread = next(e for e in first if e["type"] == "thread.created")["thread"]
        model_server.enqueue(answer("hello again"))
        await client.ask("hi again", thread=thread)
        assert (await client.run_to_end())[-1]["type"] == "run.completed"
        statements = Statements(monkeypatch)
        await turn(client, thread, model_server, "short answer. " * 10)
        counts.append(len(statements.take()))
    assert counts[0] == counts[1] < UNDER
