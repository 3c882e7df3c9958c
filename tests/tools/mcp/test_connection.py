"""One connection per server, against the real test server over stdio and streamable HTTP."""

import asyncio
import base64
import os

import pytest

from tests.support.mcp_servers.running import HttpServer, stdio_config
from tests.tools.mcp.conftest import connected, wait_until
from tools.context import ElicitationAnswer, ToolContext
from tools.mcp.config import McpServerConfig
from tools.mcp.connection import MAX_ERROR, McpCallFailed, McpUnavailable, describe


async def test_connects_lists_and_calls(manager, server_config):
    manager.configure([server_config])
    state = await connected(manager)
    assert (state.server_name, state.server_version) == ("agentweb-test-server", "1.2.3")
    assert {"add", "slow", "crash", "picture", "fail", "count", "ask_name", "grow"} <= {t.name for t in state.tools}
    result = await manager.call("srv", "add", {"a": 2, "b": 3}, None)
    assert (result.text, result.is_error) == ("5.0", False)


async def test_a_crash_mid_call_fails_the_call_and_a_later_call_works(manager, server_config, http_server):
    manager.configure([server_config])
    before = await connected(manager)
    with pytest.raises(McpCallFailed, match="srv"):
        await manager.call("srv", "crash", {}, None)
    if server_config.transport == "http":
        http_server.start()  # the crash ended its process: bring it back as a supervisor would
    await wait_until(lambda: (state := manager.state("srv")).status == "connected" and state.since > before.since)
    assert (await manager.call("srv", "add", {"a": 1, "b": 1}, None)).text == "2.0"


async def test_cancelling_the_caller_cancels_the_request_on_the_server(manager, server_config, record):
    manager.configure([server_config])
    await connected(manager)
    call = asyncio.create_task(manager.call("srv", "slow", {"seconds": 30}, None))
    await wait_until(lambda: "slow started" in record.read_text())
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await wait_until(lambda: "cancelled" in record.read_text())


async def test_list_changed_refreshes_the_tool_list(manager, server_config):
    manager.configure([server_config])
    await connected(manager)
    generation = manager.generation
    assert (await manager.call("srv", "grow", {}, None)).text == "grown"
    await wait_until(lambda: "extra" in {t.name for t in manager.state("srv").tools})
    assert manager.generation > generation


async def test_progress_goes_to_the_context(manager, server_config):
    manager.configure([server_config])
    await connected(manager)
    seen = []

    async def report(progress, total, message):
        seen.append((progress, total, message))

    result = await manager.call("srv", "count", {"steps": 3}, ToolContext(report_progress=report))
    assert result.text == "counted to 3"
    await wait_until(lambda: len(seen) == 3)
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_an_elicitation_is_answered_by_the_context(manager, server_config):
    manager.configure([server_config])
    await connected(manager)
    asked = []

    async def elicit(message, schema):
        asked.append((message, sorted(schema["properties"])))
        return ElicitationAnswer("accept", {"name": "Ada"})

    result = await manager.call("srv", "ask_name", {}, ToolContext(elicit=elicit))
    assert result.text == "hello Ada"
    assert asked == [("What is your name?", ["name"])]


@pytest.mark.parametrize("answer", [ElicitationAnswer("decline"), ElicitationAnswer("cancel")])
async def test_a_declined_elicitation_reaches_the_server(manager, server_config, answer):
    manager.configure([server_config])
    await connected(manager)

    async def elicit(message, schema):
        return answer

    result = await manager.call("srv", "ask_name", {}, ToolContext(elicit=elicit))
    assert result.text == f"no name ({answer.action})"


async def test_a_call_given_up_while_its_question_is_open_leaves_the_connection_up(manager, record):
    # The caller gives up (Stop, a deadline) while the person has not answered: the server's question is withdrawn
    # and its call cancelled, and the same connection serves the next call, which asks again. Before, the
    # withdrawn question took the client's session down: the next call failed ("closed the connection").
    manager.configure([stdio_config("srv", record)])
    before = await connected(manager)
    asked = asyncio.Event()

    async def never_answered(message, schema):
        asked.set()
        await asyncio.sleep(3600)

    call = asyncio.create_task(manager.call("srv", "ask_name", {}, ToolContext(elicit=never_answered)))
    await asyncio.wait_for(asked.wait(), 20)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    async def answered(message, schema):
        return ElicitationAnswer("accept", {"name": "Bob"})

    result = await manager.call("srv", "ask_name", {}, ToolContext(elicit=answered))
    assert result.text == "hello Bob"
    await asyncio.sleep(1)  # two pings (the fixture's interval is 0.5 s) would have found a lost session
    assert (manager.state("srv").status, manager.state("srv").since) == ("connected", before.since)


async def test_an_elicitation_is_declined_when_the_context_cannot_ask(manager, server_config):
    manager.configure([server_config])
    await connected(manager)
    assert (await manager.call("srv", "ask_name", {}, ToolContext())).text == "no name (decline)"


async def test_an_error_result_and_an_image(manager, server_config):
    manager.configure([server_config])
    await connected(manager)
    failed = await manager.call("srv", "fail", {"reason": "no disk"}, None)
    assert failed.is_error and "cannot do it: no disk" in failed.text
    picture = await manager.call("srv", "picture", {}, None)
    assert picture.text == "a single pixel\n[image image/png, 70 B]"
    [image] = picture.artifact["content"]
    assert (image["type"], image["mimeType"]) == ("image", "image/png")


async def test_a_server_down_at_start_fails_calls_clearly_and_connects_when_it_comes_up(manager, record, tmp_path):
    later = HttpServer(tmp_path / "later.txt")
    manager.configure([later.config("later"), stdio_config("srv", record)])
    await wait_until(lambda: manager.state("later").status == "failed")
    with pytest.raises(McpUnavailable, match=r"MCP server 'later' is not connected \(.*\); the app tries again in"):
        await manager.call("later", "add", {"a": 1, "b": 1}, None)
    await connected(manager, "srv")  # the other server is not held up
    assert (await manager.call("srv", "add", {"a": 1, "b": 1}, None)).text == "2.0"
    try:
        later.start()
        await connected(manager, "later")
        assert (await manager.call("later", "add", {"a": 2, "b": 2}, None)).text == "4.0"
    finally:
        later.stop()


async def test_a_stdio_server_gets_only_the_configured_environment_and_path(manager, record, monkeypatch):
    monkeypatch.setenv("AGENTWEB_SECRET_FOR_TEST", "not for the server")
    manager.configure([stdio_config("srv", record, env={"MCP_TEST_RECORD": str(record), "GIVEN": "yes"})])
    await connected(manager)
    names = set((await manager.call("srv", "environment", {}, None)).text.split())
    # LC_CTYPE: Python itself sets it at start-up in a C locale (PEP 538).
    assert names - {"LC_CTYPE"} == {"GIVEN", "MCP_TEST_RECORD", "PATH"}


async def test_a_removed_server_is_closed(manager, server_config):
    manager.configure([server_config])
    await connected(manager)
    manager.configure([])
    assert manager.states() == {}
    with pytest.raises(McpUnavailable, match="not configured"):
        await manager.call("srv", "add", {"a": 1, "b": 1}, None)


async def test_a_chatty_stdio_servers_standard_error_is_kept_short(manager, record, monkeypatch):
    from tools.mcp import connection

    monkeypatch.setattr(connection, "MAX_STDERR_KEPT", 1000)
    manager.configure([stdio_config("srv", record)])
    await connected(manager)
    for _ in range(40):  # the SDK's server logs each failed call to its standard error
        await manager.call("srv", "fail", {"reason": "x" * 50}, None)
    [owner] = [c for c in manager._connections.values()]
    await wait_until(lambda: 0 < os.fstat(owner._stderr.fileno()).st_size <= 1000 + 800)


def test_a_failure_that_echoes_the_request_shows_none_of_the_servers_secrets():
    """An HTTP server's error may echo the request: its URL's password (sent as Basic authorization), its query's
    token (sent percent-encoded), its headers. None of them, in any of those forms, is in the failure's text."""
    config = McpServerConfig(
        name="srv",
        transport="http",
        url="https://alice:pa55%2Fw0rd@mcp.example/mcp?token=tok/123+456789&region=eu",
        headers={"X-Api-Key": "key-abcdef-123456"},
    )
    authorization = "Basic " + base64.b64encode(b"alice:pa55/w0rd").decode()
    echoed = (
        f"refused GET /mcp?token=tok%2F123%2B456789&region=eu with Authorization: {authorization}, "
        'headers {"X-Api-Key": "key-abcdef-123456", "password": "pa55\\/w0rd"} ' + "x" * 2000
    )
    text = describe(RuntimeError(echoed), config)
    for secret in (authorization.removeprefix("Basic "), "tok%2F123", "tok/123", "key-abcdef", "pa55"):
        assert secret not in text
    assert text.startswith("refused GET /mcp?token=••••&region=eu with Authorization: ••••, headers {")
    assert len(text) <= MAX_ERROR + 1
