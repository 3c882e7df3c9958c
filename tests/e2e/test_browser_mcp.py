"""An MCP server's tool in real Chromium, against the real app (Daphne), a scripted model server and the real test
MCP server (tests/support/mcp_servers/tool_server.py, over stdio) configured as an admin row: its card is named
`<server>__<tool>`, asks for approval by default, is approved from the card, and shows the image the tool returned.

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
