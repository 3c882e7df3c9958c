"""Versions in real Chromium: a regenerated answer's version switcher (1 / 2), which survives a reload; editing an
earlier message, whose earlier branch stays reachable; the switcher and Edit used from the keyboard."""

import pytest

from tests.e2e.test_browser_chat import finished
from tests.support.browser import connected, launch, screenshot, sign_in, wait_until
from tests.support.processes import served_app

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-versions")
    with served_app(tmp_path, {"ada": "lovelace-1815"}, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0.01") as (
        base_url,
        _,
    ):
        yield base_url


@pytest.fixture(scope="module")
def page(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app, "ada", "lovelace-1815", connect=False)
        yield page
        browser.close()


def new_chat(page, app, *questions):
    page.goto(f"{app}/")
    for question in questions:
        connected(page)
        users = page.locator("#messages .message.user").count()
        page.fill("#composer-input", question)
        page.keyboard.press("Enter")
        wait_until(page, f"document.querySelectorAll('#messages .message.user').length > {users}")
        wait_until(page, "document.querySelector('#messages .message.assistant')")
        finished(page)


def user_texts(page):
    return page.locator("#messages .message.user .message-text").all_text_contents()


def answer_versions(page):
    return page.locator("#messages .message.assistant .versions .version-count")


def test_a_regenerated_answer_keeps_the_first_version_and_the_choice_survives_a_reload(app, page):
    new_chat(page, app, "what is 2+3?")
    page.click(".turn-regenerate")
    sync_api.expect(answer_versions(page)).to_have_text("2 / 2")
    finished(page)
    sync_api.expect(page.get_by_role("button", name="Next version")).to_be_disabled()
    page.get_by_role("button", name="Previous version").click()
    sync_api.expect(answer_versions(page)).to_have_text("1 / 2")
    sync_api.expect(page.locator("#messages .message.assistant .message-text").last).to_contain_text("5")
    screenshot(page, "versions.png")
    page.reload()
    connected(page)
    sync_api.expect(answer_versions(page)).to_have_text("1 / 2")
    sync_api.expect(page.get_by_role("button", name="Previous version")).to_be_disabled()


def test_editing_an_earlier_message_forks_and_the_earlier_branch_stays_reachable(app, page):
    new_chat(page, app, "what is 2+3?", "what is 6*7?")
    page.locator("#messages .message.user").first.locator(".turn-edit").click()
    page.fill(".turn-edit-input", "what is 5*5?")
    page.keyboard.press("Enter")
    sync_api.expect(page.locator("#messages .message.assistant .message-text").last).to_contain_text("25")
    finished(page)
    assert user_texts(page) == ["what is 5*5?"]
    first = page.locator("#messages .message.user").first
    sync_api.expect(first.locator(".version-count")).to_have_text("2 / 2")
    first.get_by_role("button", name="Previous version").click()
    wait_until(page, "document.querySelectorAll('#messages .message.user').length === 2")
    assert user_texts(page) == ["what is 2+3?", "what is 6*7?"]
    sync_api.expect(page.locator("#messages .message.assistant .message-text").last).to_contain_text("42")


def focused(page):
    return page.evaluate("() => document.activeElement.getAttribute('aria-label')")


def test_the_switcher_and_edit_work_from_the_keyboard(app, page):
    new_chat(page, app, "what is 2+3?")
    first = page.locator("#messages .message.user").first
    first.locator(".turn-edit").focus()
    page.keyboard.press("Enter")  # Edit, from the keyboard
    sync_api.expect(page.locator(".turn-edit-input")).to_be_focused()
    page.keyboard.press("Control+A")
    page.keyboard.type("what is 6*7?")
    page.keyboard.press("Enter")
    sync_api.expect(page.locator("#messages .message.assistant .message-text").last).to_contain_text("42")
    finished(page)
    first = page.locator("#messages .message.user").first
    first.locator(".turn-edit").focus()
    page.keyboard.press("Shift+Tab")  # back from Edit to the switcher before it: Next is disabled, so Previous
    assert focused(page) == "Previous version"
    page.keyboard.press("Enter")
    sync_api.expect(page.locator("#messages .message.user .version-count").first).to_have_text("1 / 2")
    assert user_texts(page) == ["what is 2+3?"]
    # The keyboard stays on the switcher, on the button that still goes somewhere.
    wait_until(page, "document.activeElement.getAttribute('aria-label') === 'Next version'")
    page.keyboard.press("Enter")
    sync_api.expect(page.locator("#messages .message.user .version-count").first).to_have_text("2 / 2")
    assert user_texts(page) == ["what is 6*7?"]
    wait_until(page, "document.activeElement.getAttribute('aria-label') === 'Previous version'")
