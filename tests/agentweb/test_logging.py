"""What a real Daphne process prints: each `agentweb.*` line once, and Daphne's own start-up lines."""

import asyncio
import uuid

import httpx
import pytest

from tests.support.processes import Daphne, app_environment, create_user, log_in, manage, model_server
from tests.support.sockets import ChatSocket

# The model calls the calculator with an expression that raises: tools/executor.py logs "Tool calculator raised
# ValueError" at INFO on the `agentweb.tools` logger.
SCRIPT = [
    {"tool_calls": [{"id": "call_log_1", "name": "calculator", "arguments": {"expression": "1/0"}}]},
    {"text": "It cannot be divided by zero."},
]
LINE = "Tool calculator raised ValueError"


async def one_turn(base_url: str, cookie: str) -> list[dict]:
    async with ChatSocket(base_url, cookie) as socket:
        await socket.send(type="message.send", thread=None, content="1/0?", client_msg_id=str(uuid.uuid4()))
        return await socket.until("run.completed", "run.failed")


@pytest.fixture(scope="module")
def daphne_output(tmp_path_factory) -> str:
    """Everything a Daphne process printed (stdout and stderr) while it served one turn with a failing tool."""
    tmp_path = tmp_path_factory.mktemp("logging")
    with model_server(SCRIPT, tmp_path) as model_url:
        env = app_environment(
            tmp_path,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="m",
            DJANGO_DEBUG="true",  # Django's defaults then give its own loggers a console handler too
        )
        manage(env, "migrate", "--noinput")
        create_user(env, "ada", "lovelace-1815")
        server = Daphne(env).start()
        try:
            events = asyncio.run(one_turn(server.url, log_in(server.url, "ada", "lovelace-1815")))
            httpx.get(f"{server.url}/no-such-page/")  # django.request logs "Not Found: /no-such-page/"
        finally:
            server.stop()
    assert events[-1]["type"] == "run.completed", events[-1]
    return server.log_path.read_text(errors="replace")


def test_an_agentweb_line_is_printed_once(daphne_output):
    assert daphne_output.count(LINE) == 1, daphne_output


def test_a_django_line_is_printed_once(daphne_output):
    assert daphne_output.count("Not Found: /no-such-page/") == 1, daphne_output


def test_daphnes_own_start_up_line_is_still_printed(daphne_output):
    assert daphne_output.count("Listening on TCP address") == 1, daphne_output
