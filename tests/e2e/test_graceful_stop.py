"""A clean stop of the server (SIGTERM, as systemd, Docker or Ctrl-C stop it) during an answer: the text streamed so
far is written and the run is interrupted before the process exits, so after a restart all of it is there."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from websockets.exceptions import ConnectionClosed

from tests.support.processes import Daphne, app_environment, create_user, log_in, manage, model_server
from tests.support.sockets import ChatSocket

# A slow model: 3 characters every 50 ms, far longer than the test waits.
LONG_ANSWER = " ".join(f"word{i}" for i in range(2000))


@pytest.fixture
def app(tmp_path):
    with model_server([{"text": LONG_ANSWER, "delay_ms": 50}], tmp_path) as url:
        env = app_environment(
            tmp_path, AGENTWEB_LLM_API="openai", AGENTWEB_LLM_BASE_URL=f"{url}/v1", AGENTWEB_LLM_MODEL="m"
        )
        manage(env, "migrate", "--noinput")
        create_user(env, "ada", "lovelace-1815")
        server = Daphne(env).start()
        yield server
        server.stop()


async def streamed_until_the_server_stops(server: Daphne, cookie: str) -> tuple[str, str]:
    """Ask, let the answer stream a while, stop the server cleanly: the thread and every piece of text received."""
    received: list[str] = []
    async with ChatSocket(server.url, cookie) as socket:
        await socket.send(type="message.send", thread=None, content="tell me", client_msg_id=str(uuid.uuid4()))
        events = await socket.until("message.delta")
        thread = events[0]["thread"]
        received.append(events[-1]["text"])
        while len(received) < 20:
            event = (await socket.until("message.delta"))[-1]
            received.append(event["text"])
        server.process.terminate()  # SIGTERM
        try:
            while True:
                event = (await socket.until("message.delta", "message.completed", "run.failed"))[-1]
                received.append(event.get("text", ""))
        except ConnectionClosed:
            pass
    await asyncio.to_thread(server.process.wait, 30)
    return thread, "".join(received)


def test_a_clean_stop_keeps_all_the_text_streamed_and_marks_the_run_interrupted(app):
    cookie = log_in(app.url, "ada", "lovelace-1815")
    thread, received = asyncio.run(streamed_until_the_server_stops(app, cookie))
    assert len(received) > 20
    app.start()

    async def snapshot():
        async with ChatSocket(app.url, cookie) as socket:
            await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
            return (await socket.until("thread.snapshot"))[-1]

    state = asyncio.run(snapshot())
    answer = state["messages"][-1]
    assert state["run"]["status"] == "interrupted"
    assert answer["status"] == "error"
    assert answer["content"].startswith(received)
