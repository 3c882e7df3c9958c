"""The menus of the page's header and the chat's top bar in real Chromium, on a phone (390 px wide), beside the
sidebar on a narrow screen and on a desktop: each opens inside the screen, so every button in it can be reached.

AGENTWEB_SCREENSHOTS=1 also writes the share menu on a phone to docs/screenshots/.
"""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, connected, sign_in, wait_until
from tests.support.processes import ROOT, app_environment, create_user, daphne, manage

USER, PASSWORD = "grace", "hopper-1906"
PHONE = {"width": 390, "height": 844}
NARROW = {"width": 760, "height": 820}  # just wide enough for the sidebar: the least room beside it
WIDE = {"width": 1280, "height": 820}
SCREENSHOTS = ROOT / "docs" / "screenshots"
# Each menu: what opens it, and what opens.
MENUS = {
    "account": ("#account-toggle", "#account-popover"),
    "tools": ("#tools-toggle", "#tools-panel"),
    "share": ("#share-toggle", "#share-menu .topbar-popover"),
    "export": ("#export-toggle", "#export-menu .topbar-popover"),
    "model": ("#model-picker-button", ".list-picker-list"),
}

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-menus")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
    manage(env, "migrate", "--noinput")
    create_user(env, USER, PASSWORD)
    with daphne(env) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def page(app, browser):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in(page, app, USER, PASSWORD)
    yield page
    context.close()


@pytest.fixture(scope="module")
def thread_url(page):
    """A chat with an answer, so that Share and Export offer their buttons."""
    page.fill("#composer-input", "what is 23*19?")
    page.keyboard.press("Enter")
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("23*19 = 437")
    wait_until(page, "document.querySelector('#stop').hidden")
    return page.url


def open_menu(page, url, viewport, menu):
    page.set_viewport_size(viewport)
    page.goto(url)
    connected(page)
    toggle, popover = MENUS[menu]
    page.click(toggle)
    expect(page.locator(popover)).to_be_visible()
    return page.locator(popover)


def outside(page, locator, viewport):
    """The controls of `locator` (and itself) that are not wholly inside the viewport's width."""
    nodes = [locator, *locator.locator("button, a, input, summary, select").all()]
    boxes = [(node.evaluate("n => n.id || n.textContent.trim()"), node.bounding_box()) for node in nodes]
    return [name for name, box in boxes if box and (box["x"] < 0 or box["x"] + box["width"] > viewport["width"])]


@pytest.mark.parametrize("menu", MENUS)
@pytest.mark.parametrize("viewport", [PHONE, NARROW, WIDE], ids=["phone", "narrow", "desktop"])
def test_a_menu_opens_inside_the_screen(page, thread_url, viewport, menu):
    popover = open_menu(page, thread_url, viewport, menu)
    assert outside(page, popover, viewport) == []


def test_a_share_link_can_be_created_on_a_phone(page, thread_url):
    open_menu(page, thread_url, PHONE, "share")
    page.click("#share-create")
    expect(page.locator("#share-url")).to_be_visible()
    assert "/s/" in page.locator("#share-url").input_value()
    assert outside(page, page.locator("#share-menu .topbar-popover"), PHONE) == []
    if os.environ.get("AGENTWEB_SCREENSHOTS"):
        page.screenshot(path=str(SCREENSHOTS / "share-menu-phone.png"))
