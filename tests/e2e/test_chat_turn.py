"""One tool-calling chat turn end to end: a real login, a real websocket to Daphne, a real model server."""

import json
import uuid

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.support.processes import app_environment, create_user, daphne, log_in, manage, model_server

API_KEY = "sk-e2e-secret-never-shown"
SCRIPT = [
    {"tool_calls": [{"id": "call_e2e_1", "name": "calculator", "arguments": {"expression": "23*19"}}]},
    {"text": "23 × 19 = 437."},
]


async def run_turn(base_url: str, cookie: str, content: str) -> list[dict]:
    ws_url = base_url.replace("http://", "ws://") + "/ws/chat/"
    async with connect(ws_url, additional_headers={"Cookie": cookie}, origin=base_url) as socket:
        await socket.send(
            json.dumps({"type": "message.send", "thread": None, "content": content, "client_msg_id": str(uuid.uuid4())})
        )
        events = []
        while not events or events[-1]["type"] not in {"run.completed", "run.failed"}:
            events.append(json.loads(await socket.recv()))
        return events


@pytest.fixture(scope="module")
def app_with_model(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("e2e")
    with model_server(SCRIPT, tmp_path) as model_url:
        env = app_environment(
            tmp_path,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="e2e-model",
            AGENTWEB_LLM_API_KEY=API_KEY,
        )
        manage(env, "migrate", "--noinput")
        create_user(env, "ada", "lovelace-1815")
        with daphne(env) as base_url:
            cookie = log_in(base_url, "ada", "lovelace-1815")
            yield {"base_url": base_url, "model_url": model_url, "cookie": cookie}


@pytest.fixture(scope="module")
def turn(app_with_model):
    import asyncio

    events = asyncio.run(run_turn(app_with_model["base_url"], app_with_model["cookie"], "what is 23*19?"))
    requests = httpx.get(f"{app_with_model['model_url']}/_requests").json()
    return {"events": events, "requests": requests}


def test_the_run_completes_with_the_models_final_answer(turn):
    events = turn["events"]
    assert events[-1]["type"] == "run.completed"
    final = [e for e in events if e["type"] == "message.completed"][-1]
    assert final["content"] == "23 × 19 = 437."


def test_the_tool_ran_and_its_result_reached_the_browser(turn):
    completed = [e for e in turn["events"] if e["type"] == "tool_call.completed"]
    assert [(e["status"], e["content"]) for e in completed] == [("success", "437")]


def test_the_second_model_request_carries_the_tool_result_with_its_call_id(turn):
    second = turn["requests"][1]["json"]
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    tool = next(m for m in second["messages"] if m["role"] == "tool")
    assert assistant["tool_calls"][0]["id"] == "call_e2e_1"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"expression": "23*19"}
    assert (tool["tool_call_id"], tool["content"]) == ("call_e2e_1", "437")


def test_the_model_server_got_the_key_and_the_browser_never_did(turn):
    assert turn["requests"][0]["headers"]["Authorization"] == f"Bearer {API_KEY}"
    assert API_KEY not in json.dumps(turn["events"])


def test_the_thread_page_shows_the_model_and_never_the_key(app_with_model, turn):
    thread = turn["events"][0]["thread"]
    page = httpx.get(f"{app_with_model['base_url']}/t/{thread}/", headers={"Cookie": app_with_model["cookie"]})
    assert page.status_code == 200
    assert "e2e-model" in page.text
    assert API_KEY not in page.text


def test_a_socket_from_a_foreign_origin_is_refused(app_with_model):
    import asyncio

    from websockets.exceptions import InvalidStatus

    async def attempt():
        url = app_with_model["base_url"].replace("http://", "ws://") + "/ws/chat/"
        async with connect(url, additional_headers={"Cookie": app_with_model["cookie"]}, origin="http://evil.example"):
            pass

    with pytest.raises(InvalidStatus):
        asyncio.run(attempt())
