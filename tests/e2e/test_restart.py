"""A server killed mid-run and started again: approvals still wait and work, a streaming run can be retried."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from tests.support.processes import Daphne, Worker, app_environment, log_in, manage, model_server
from tests.support.production import forget_redis_prefix, postgres_database, production_environment, require_servers
from tests.support.sockets import ChatSocket

APPROVAL_SETUP = (
    "from django.contrib.auth.models import User; from tools.models import ToolSetting; "
    "User.objects.create_user('ada', password='lovelace-1815'); "
    "ToolSetting.objects.filter(name='calculator').update(requires_approval=True)"
)


class Server:
    """The app as one deployment runs it: Daphne, plus its run worker in production mode; killed and
    started again as a whole, as a machine's restart would."""

    def __init__(self, env: dict[str, str]):
        manage(env, "migrate", "--noinput")
        manage(env, "shell", "-c", APPROVAL_SETUP)
        self.daphne = Daphne(env)
        self.worker = Worker(env) if env.get("AGENTWEB_RUN_WORKERS") == "true" else None
        self.url = self.daphne.url

    def start(self) -> Server:
        self.daphne.start()
        if self.worker:
            self.worker.start()
        return self

    def kill(self) -> None:
        self.daphne.kill()
        if self.worker:
            self.worker.kill()

    def stop(self) -> None:
        self.daphne.stop()
        if self.worker:
            self.worker.stop()


@pytest.fixture(params=["sqlite", "postgres+redis"])
def environment(request, tmp_path):
    """SQLite and one process, or PostgreSQL, Redis and a run worker with debug off (tests/support/production.py)."""
    if request.param == "sqlite":
        yield lambda **extra: app_environment(tmp_path, **extra)
        return
    require_servers()
    prefixes = []

    def environment(**extra):
        env = production_environment(tmp_path, database_url, **extra)
        prefixes.append(env["AGENTWEB_REDIS_PREFIX"])
        return env

    with postgres_database() as database_url:
        yield environment
    for prefix in prefixes:
        forget_redis_prefix(prefix)


@pytest.fixture
def server(environment):
    server = Server(environment(AGENTWEB_DEMO_DELAY="0.05")).start()
    yield server
    server.stop()


@pytest.fixture
def stalling_model_server(environment, tmp_path):
    """A model that stops mid-answer (so the kill always lands during the stream), then answers the retry."""
    script = [{"hang": True, "text": "Half an ans"}, {"text": "A whole answer."}]
    with model_server(script, tmp_path) as url:
        env = environment(
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{url}/v1",
            AGENTWEB_LLM_MODEL="m",
            # With several processes a dead process's run is known by its silence: 2 s here, not 45.
            AGENTWEB_HEARTBEAT_SECONDS="0.5",
            AGENTWEB_RUN_STALE_SECONDS="2",
        )
        server = Server(env).start()
        yield server
        server.stop()


def test_a_waiting_approval_survives_a_killed_server_and_the_run_completes_after_it(server):
    cookie = log_in(server.url, "ada", "lovelace-1815")

    async def ask():
        async with ChatSocket(server.url, cookie) as socket:
            await socket.send(
                type="message.send", thread=None, content="what is 23*19?", client_msg_id=str(uuid.uuid4())
            )
            return await socket.until("run.waiting")

    waiting = asyncio.run(ask())
    thread, call = waiting[0]["thread"], waiting[-1]["tool_calls"][0]
    server.kill()
    server.start()

    async def approve():
        async with ChatSocket(server.url, cookie) as socket:
            await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
            snapshot = (await socket.until("thread.snapshot"))[-1]
            await socket.send(type="tool_call.decide", tool_call=call, decision="approve")
            return snapshot, await socket.until("run.completed", "run.failed")

    snapshot, events = asyncio.run(approve())
    assert snapshot["messages"][1]["tool_calls"][0]["status"] == "awaiting_approval"
    assert [(e["status"], e["content"]) for e in events if e["type"] == "tool_call.completed"] == [("success", "437")]
    assert events[-1]["type"] == "run.completed"


def test_a_run_streaming_when_the_server_is_killed_is_interrupted_and_can_be_retried(stalling_model_server):
    server = stalling_model_server
    cookie = log_in(server.url, "ada", "lovelace-1815")

    async def start_answer():
        async with ChatSocket(server.url, cookie) as socket:
            await socket.send(type="message.send", thread=None, content="hello", client_msg_id=str(uuid.uuid4()))
            return await socket.until("message.delta")

    thread = asyncio.run(start_answer())[0]["thread"]
    server.kill()
    server.start()

    async def retry():
        async with ChatSocket(server.url, cookie) as socket:
            for _ in range(60):  # with several processes, until the dead one's heartbeat is stale
                await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
                snapshot = (await socket.until("thread.snapshot"))[-1]
                if snapshot["run"]["status"] != "running":
                    break
                await asyncio.sleep(0.5)
            await socket.send(type="run.retry", thread=thread)
            return snapshot, await socket.until("run.completed", "run.failed")

    snapshot, events = asyncio.run(retry())
    assert snapshot["run"]["status"] == "interrupted"
    assert events[-1]["type"] == "run.completed"
    assert [e for e in events if e["type"] == "message.completed"][-1]["content"] == "A whole answer."


def test_a_server_killed_mid_answer_keeps_nearly_all_the_text_its_tab_was_shown(tmp_path):
    """`make run`'s shape (one process, SQLite, no Redis to read the deltas back from): what the tab was shown is in
    the database within a couple of seconds (AGENTWEB_FLUSH_INTERVAL), so a kill -9 loses at most that much."""
    answer = " ".join(f"word{n}" for n in range(1000))  # 3-character chunks 20 ms apart: over a minute of streaming
    with model_server([{"text": answer, "delay_ms": 20}], tmp_path) as url:
        env = app_environment(
            tmp_path, AGENTWEB_LLM_API="openai", AGENTWEB_LLM_BASE_URL=f"{url}/v1", AGENTWEB_LLM_MODEL="m"
        )
        server = Server(env).start()
        try:
            cookie = log_in(server.url, "ada", "lovelace-1815")

            async def watch(seconds: float) -> tuple[str, str]:
                async with ChatSocket(server.url, cookie) as socket:
                    await socket.send(type="message.send", thread=None, content="hi", client_msg_id=str(uuid.uuid4()))
                    first = await socket.until("message.delta")
                    thread, shown = first[0]["thread"], [first[-1]["text"]]
                    deadline = asyncio.get_running_loop().time() + seconds
                    while asyncio.get_running_loop().time() < deadline:
                        shown += [e["text"] for e in await socket.until("message.delta") if "text" in e]
                    return thread, "".join(shown)

            thread, shown = asyncio.run(watch(6))
            server.kill()
            server.start()

            async def snapshot() -> dict:
                async with ChatSocket(server.url, cookie) as socket:
                    await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
                    return (await socket.until("thread.snapshot"))[-1]

            state = asyncio.run(snapshot())
        finally:
            server.stop()
    assert state["run"]["status"] == "interrupted"
    kept = state["messages"][-1]["content"]
    assert answer.startswith(shown)
    # Nearly all of it: what streamed in the last couple of seconds may be missing, never more than half of six.
    assert answer.startswith(kept) and len(kept) >= len(shown) / 2, (len(kept), len(shown))
