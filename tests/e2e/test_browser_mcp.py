"""An MCP server's tool in real Chromium, against the real app (Daphne), a scripted model server and the real test
MCP server (tests/support/mcp_servers/tool_server.py, over stdio) configured as an admin row: its card is named
`<server>__<tool>`, asks for approval by default, is approved from the card, and shows the image the tool returned;
its request for input answered after the server's timeout still reaches it, and the next call asks again.

The fixtures are those of test_browser_tool_cards.py. AGENTWEB_SCREENSHOTS=1 also writes the waiting card to
docs/screenshots/mcp-approval.png (docs/mcp.md).
"""

import sys
import time

import pytest

from tests.e2e.test_browser_tool_cards import (  # noqa: F401  (fixtures)
    USER,
    ask,
    expect,
    finished,
    migrated_db,
    new_page,
    shoot,
    start_app,
)
from tests.support.browser import wait_until
from tests.support.mcp_servers.running import SCRIPT

pytestmark = pytest.mark.usefixtures("migrated_db")

PICTURE = [
    {"tool_calls": [{"id": "c1", "name": "srv__picture", "arguments": {}}]},
    {"text": "Here is the picture from the MCP server."},
]
SERVER_ROW = (
    "from mcpservers.models import McpServer; "
    f"McpServer.objects.create(name='srv', transport='stdio', command={sys.executable!r}, args=[{str(SCRIPT)!r}])"
)


def wait_for_tool(page, base_url: str, name: str, timeout: float = 60.0) -> None:
    """Daphne connects to its MCP servers in the background as it starts: wait until the Tools list has `name`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tools = page.request.get(f"{base_url}/tools/available").json()["tools"]
        if name in {tool["name"] for tool in tools}:
            return
        time.sleep(0.2)
    raise AssertionError(f"{name} is not among the tools after {timeout} s")


def test_an_mcp_calls_card_asks_for_approval_and_shows_the_image_it_returned(start_app, new_page):  # noqa: F811
    url = start_app(PICTURE, setup=SERVER_ROW)
    page = new_page(url)
    wait_for_tool(page, url, "srv__picture")
    ask(page, "draw me something")

    card = page.locator(".tool-card[data-status='awaiting_approval']")
    expect(card.locator(".decide-approve")).to_be_visible()
    expect(card.locator(".tool-name")).to_have_text("srv__picture")
    assert card.locator(".status").text_content() == "needs approval"
    shoot(page.locator(".message.assistant").last, "mcp-approval.png")
    card.locator(".decide-approve").click()

    done = page.locator(".tool-card[data-status='success']")
    expect(done.locator(".tool-decision")).to_have_text(f"Approved by {USER}")
    expect(done).to_have_attribute("open", "")  # opens by itself to show the image
    image = done.locator("img.tool-image")
    expect(image).to_have_count(1)
    expect(image).to_have_attribute("alt", "Image 1 from srv__picture")
    assert image.get_attribute("src").startswith("blob:")
    wait_until(page, "document.querySelector('img.tool-image')?.complete")
    assert image.evaluate("(img) => [img.naturalWidth, img.naturalHeight]") == [1, 1]
    expect(done.locator(".tool-result-text")).to_have_text("a single pixel\n[image image/png, 70 B]")
    finished(page)
    expect(page.locator(".message.assistant .message-text").last).to_have_text(
        "Here is the picture from the MCP server."
    )


ASK_TWICE = [
    {"tool_calls": [{"id": "c1", "name": "srv__ask_name", "arguments": {}}]},
    {"text": "Nice to meet you."},
    {"tool_calls": [{"id": "c2", "name": "srv__ask_name", "arguments": {}}]},
    {"text": "Nice to meet you again."},
]
# A 5 s timeout for each call (connecting too: the test server starts well within it, and a slow start is retried).
SERVER_WITH_A_SHORT_TIMEOUT = SERVER_ROW.replace(")", ", timeout=5, require_approval=False)", 1)


def test_an_answer_given_after_the_servers_timeout_reaches_it_and_the_next_call_asks_again(start_app, new_page):  # noqa: F811
    url = start_app(ASK_TWICE, setup=SERVER_WITH_A_SHORT_TIMEOUT)
    page = new_page(url)
    wait_for_tool(page, url, "srv__ask_name")
    ask(page, "greet me")
    form = page.locator(".tool-card form.input-request")
    expect(form.locator(".input-request-message")).to_have_text("What is your name?")
    page.wait_for_timeout(7000)  # the person takes longer than the server's timeout: the wait does not count
    form.get_by_label("Name", exact=True).fill("Ada")
    form.get_by_role("button", name="Accept").click()
    first = page.locator(".tool-card").first
    expect(first).to_have_attribute("data-status", "success")
    expect(first.locator(".tool-result-text")).to_have_text("hello Ada")
    finished(page)

    ask(page, "and again")
    form = page.locator(".tool-card form.input-request")
    expect(form.locator(".input-request-message")).to_have_text("What is your name?")
    form.get_by_label("Name", exact=True).fill("Bob")
    form.get_by_role("button", name="Accept").click()
    second = page.locator(".tool-card").nth(1)
    expect(second).to_have_attribute("data-status", "success")
    expect(second.locator(".tool-result-text")).to_have_text("hello Bob")
