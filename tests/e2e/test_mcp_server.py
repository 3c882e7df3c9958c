"""An MCP server from AGENTWEB_MCP_CONFIG in the real app: Daphne connects to it as it starts, its tools appear in
the Tools panel once connected, a turn calls one through the websocket, and stopping Daphne ends the stdio server."""

import asyncio
import json
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_chat_turn import run_turn
from tests.support.mcp_servers.running import SCRIPT
from tests.support.processes import Daphne, app_environment, create_user, log_in, manage, model_server

MODEL_SCRIPT = [
    {"tool_calls": [{"id": "call_mcp_1", "name": "srv__add", "arguments": {"a": 20, "b": 22}}]},
    {"text": "20 + 22 = 42."},
]


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("e2e-mcp")
    config = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(SCRIPT)], "requireApproval": False}
    config.write_text(json.dumps({"mcpServers": {"srv": entry}}))
    with model_server(MODEL_SCRIPT, tmp_path) as model_url:
        env = app_environment(
            tmp_path,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="e2e-model",
            AGENTWEB_LLM_API_KEY="sk-e2e",
            AGENTWEB_MCP_CONFIG=str(config),
        )
        manage(env, "migrate", "--noinput")
        create_user(env, "ada", "lovelace-1815")
        server = Daphne(env).start()
        try:
            cookie = log_in(server.url, "ada", "lovelace-1815")
            yield {"server": server, "cookie": cookie}
        finally:
            server.stop()


def test_daphne_connects_at_start_and_a_turn_calls_the_mcp_tool(app):
    server, cookie = app["server"], app["cookie"]
    deadline = time.monotonic() + 60
    names: set[str] = set()
    while "srv__add" not in names and time.monotonic() < deadline:
        tools = httpx.get(f"{server.url}/tools/available", headers={"Cookie": cookie}).json()["tools"]
        names = {tool["name"] for tool in tools}
        time.sleep(0.2)
    assert "srv__add" in names, server.log_tail()
    stdio_servers = children_of(server.process.pid)
    assert stdio_servers, "the stdio server runs as a child of Daphne"

    events = asyncio.run(run_turn(server.url, cookie, "what is 20+22?"))
    completed = [e for e in events if e["type"] == "tool_call.completed"]
    assert [(e["status"], e["content"]) for e in completed] == [("success", "42.0")]
    assert events[-1]["type"] == "run.completed"

    server.stop()
    assert not [pid for pid in stdio_servers if alive(pid)], "stopping Daphne ends its stdio MCP servers"
