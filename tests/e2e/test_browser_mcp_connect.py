"""The Connect card in real Chromium, against the real app (Daphne), a scripted model server and an MCP server of
the SDK that takes each person's own key (tests/support/mcp_servers/oauth_server.py): a call of its tool for a person
who has not connected shows Connect; the person follows it, enters their key in the tab it opens, and the call goes
on by itself with their key; Cancel on a second card ends that call unrun.

The fixtures are those of test_browser_tool_cards.py."""

# ruff: noqa: F811  (the fixtures imported below are the tests' parameters)

import pytest

from tests.e2e.test_browser_tool_cards import (  # noqa: F401  (fixtures)
    ask,
    expect,
    finished,
    migrated_db,
    new_page,
    start_app,
)
from tests.support.mcp_servers.running import OAuthServer

pytestmark = pytest.mark.usefixtures("migrated_db")

WHOAMI = [
    {"tool_calls": [{"id": "c1", "name": "srv__whoami", "arguments": {}}]},
    {"text": "You are ann there."},
]


@pytest.fixture
def key_server(tmp_path):
    server = OAuthServer(tmp_path / "record.txt").start()
    yield server
    server.stop()


def setup_for(server: OAuthServer) -> str:
    tool = {"name": "whoami", "description": "The account this call acts for.", "inputSchema": {"type": "object"}}
    return (
        "from mcpservers.models import McpServer; from mcpconnect.models import ServerTools; "
        f"McpServer.objects.create(name='srv', transport='http', url={server.url!r}, per_person='header', "
        "person_header='Authorization', require_approval=False); "
        f"ServerTools.objects.create(server='srv', tools=[{tool!r}])"
    )


def test_the_connect_card_opens_the_page_and_the_call_goes_on_with_the_persons_key(
    start_app,
    new_page,
    key_server,
):
    url = start_app(WHOAMI, setup=setup_for(key_server))
    page = new_page(url)
    ask(page, "who am I there?")

    card = page.locator(".tool-card .connect-request")
    expect(card).to_be_visible()
    expect(card.locator(".connect-request-label")).to_have_text("srv works with your own account.")
    link = card.locator("a.connect-open")
    expect(link).to_have_text("Connect srv")
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_load_state()
    tab.fill("#key-srv", "Bearer key-ann")
    tab.locator("#server-srv .mcp-connect").click()
    expect(tab.locator(".messages")).to_contain_text("Connected to srv.")
    assert "key-ann" not in tab.content()

    done = page.locator(".tool-card[data-status='success']")
    expect(done.locator(".tool-result-text")).to_have_text("you are ann", timeout=20000)
    finished(page)
    expect(page.locator(".message.assistant .message-text").last).to_have_text("You are ann there.")
    assert key_server.record.read_text().split() == ["whoami", "ann"]


def test_cancel_on_the_connect_card_ends_the_call_unrun(start_app, new_page, key_server):
    script = [WHOAMI[0], {"text": "You did not connect."}]
    page = new_page(start_app(script, setup=setup_for(key_server)))
    ask(page, "who am I there?")
    card = page.locator(".tool-card .connect-request")
    expect(card).to_be_visible()
    card.locator(".connect-cancel").click()
    failed = page.locator(".tool-card[data-status='error']")
    expect(failed.locator(".tool-result-text")).to_contain_text("did not connect")
    finished(page)
    assert not key_server.record.exists()  # the server was never called
