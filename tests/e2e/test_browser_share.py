"""Sharing a conversation in real Chromium: the owner shares from the thread's header, a visitor who is not
logged in opens the link (with and without JavaScript), the owner revokes it and the link 404s.

AGENTWEB_SCREENSHOTS=1 also writes the share menu, the shared page and the list of links to docs/screenshots/.
"""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.processes import ROOT, app_environment, daphne, manage

USER, PASSWORD = "grace", "hopper-1906"
SCREENSHOTS = ROOT / "docs" / "screenshots"

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


def screenshot(page, name):
    """For the docs, with AGENTWEB_SCREENSHOTS=1."""
    if os.environ.get("AGENTWEB_SCREENSHOTS"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("share")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
    manage(env, "migrate", "--noinput")
    manage(
        env,
        "shell",
        "-c",
        f"from django.contrib.auth.models import User; User.objects.create_user({USER!r}, password={PASSWORD!r})",
    )
    with daphne(env) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def owner_page(app, browser):
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{app}/")
    page.fill("#id_username", USER)
    page.fill("#id_password", PASSWORD)
    page.click("#login-form [type=submit]")
    # Typing before the page's script has started would put the Enter into the textarea.
    expect(page.locator("#connection-state")).to_have_attribute("data-state", "connected")
    yield page
    context.close()


@pytest.fixture(scope="module")
def share_url(owner_page):
    """The owner asks the demo model a question that calls a tool, then shares the thread from its header."""
    page = owner_page
    page.fill("#composer-input", "what is 23*19?")
    page.keyboard.press("Enter")
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("23*19 = 437")
    expect(page.locator("#stop")).to_be_hidden()  # the run is over
    page.click("#share-toggle")
    expect(page.locator("#share-hide-prompt")).to_be_checked()
    page.click("#share-create")
    url_input = page.locator("#share-url")
    expect(url_input).to_be_visible()
    url = url_input.input_value()
    screenshot(page, "share-menu.png")
    assert "/s/" in url
    return url


def test_it_opens_for_a_visitor_who_is_not_logged_in_and_shows_the_conversation(browser, share_url):
    context = browser.new_context()
    page = context.new_page()
    response = page.goto(share_url)
    assert response.status == 200
    expect(page.locator(".message.user .message-text")).to_have_text("what is 23*19?")
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("23*19 = 437")
    card = page.locator(".tool-card").first
    expect(card.locator(".tool-name")).to_have_text("calculator")
    card.locator("summary").click()
    expect(card.locator(".tool-result-text")).to_have_text("437")
    assert page.locator("#user-name, #composer-input, script").count() == 0
    screenshot(page, "shared-page.png")
    context.close()


def test_it_shows_the_conversation_with_javascript_disabled(browser, share_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    assert page.goto(share_url).status == 200
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("23*19 = 437")
    card = page.locator(".tool-card").first
    expect(card.locator(".tool-result-text")).to_be_hidden()
    card.locator("summary").click()  # <details> opens without a script
    expect(card.locator(".tool-result-text")).to_have_text("437")
    context.close()


def test_it_404s_once_the_owner_revokes_it(app, browser, owner_page, share_url):
    owner_page.goto(f"{app}/shares/")
    screenshot(owner_page, "share-links.png")
    owner_page.locator(".share-item").first.get_by_role("button", name="Revoke").click()
    expect(owner_page.locator(".share-item").first).to_contain_text("revoked")
    context = browser.new_context()
    page = context.new_page()
    assert page.goto(share_url).status == 404
    expect(page.locator("body")).not_to_contain_text("23*19 = 437")
    context.close()
