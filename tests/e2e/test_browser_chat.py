"""A person's first turn, in real Chromium against the real app with the offline demo model."""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, connected, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage

XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0.02")
    manage(env, "migrate", "--noinput")
    create_user(env, "grace", "hopper-1906")
    with daphne(env) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def page(app, browser):
    page = browser.new_page()
    sign_in(page, app, "grace", "hopper-1906")
    yield page
    page.close()


def finished(page):
    wait_until(page, "document.querySelector('#stop').hidden && !document.querySelector('.typing')")


@pytest.fixture(scope="module")
def first_turn(page):
    # Record every length the streaming answer goes through, as a person would see it grow.
    page.evaluate(
        """() => {
        window.__lengths = [];
        new MutationObserver(() => {
            const texts = document.querySelectorAll('.message.assistant .message-text');
            if (texts.length) window.__lengths.push(texts[texts.length - 1].textContent.length);
        }).observe(document.querySelector('#messages'), {subtree: true, childList: true, characterData: true});
    }"""
    )
    page.fill("#composer-input", "what is 23*19?")
    page.keyboard.press("Enter")
    # The demo's turn is two model calls (the tool call, then the follow-up text): two segments of one answer.
    wait_until(page, "document.querySelectorAll('.message.assistant .answer-segment').length >= 2")
    finished(page)
    return page


def test_the_answer_streams_in_piece_by_piece(first_turn):
    lengths = first_turn.evaluate("window.__lengths")
    final = first_turn.locator(".message.assistant .message-text").last.text_content()
    partial = {n for n in lengths if 0 < n < len(final)}
    assert len(partial) >= 5


def test_the_tool_card_shows_name_arguments_status_and_result(first_turn):
    card = first_turn.locator(".tool-card").first
    card.locator("summary").click()
    assert "calculator" in card.locator("summary").text_content()
    assert card.get_attribute("data-status") == "success"
    assert '"expression": "23*19"' in card.locator(".tool-args-text").text_content()
    assert card.locator(".tool-result-text").text_content() == "437"


def test_the_final_answer_gives_the_result_and_says_it_is_a_demo(first_turn):
    answer = first_turn.locator(".message.assistant .message-text").last.text_content()
    assert "23*19 = 437" in answer
    assert "demo model" in answer
    assert first_turn.locator("#demo-banner").is_visible()


def test_the_address_names_the_thread_and_a_reload_shows_it_again(first_turn):
    assert "/t/" in first_turn.url
    first_turn.reload()
    first_turn.wait_for_selector(".tool-card")
    assert first_turn.locator(".tool-card .tool-result-text").first.text_content() == "437"
    assert "23*19 = 437" in first_turn.locator(".message.assistant .message-text").last.text_content()


def test_markup_in_a_message_is_shown_as_text_and_never_runs(first_turn):
    first_turn.click("#new-chat")
    first_turn.wait_for_selector("#composer-input")
    connected(first_turn)
    first_turn.fill("#composer-input", XSS)
    first_turn.keyboard.press("Enter")
    first_turn.wait_for_selector(".message.assistant")
    finished(first_turn)
    first_turn.reload()
    first_turn.wait_for_selector(".message.user")
    assert first_turn.locator(".message.user .message-text").first.text_content() == XSS
    assert first_turn.evaluate("window.__pwned") is None
    assert first_turn.locator("#thread-list img, #messages img").count() == 0


def test_a_message_sent_in_one_tab_shows_in_another_tab_of_the_chat_at_once(app, browser, page):
    page.goto(f"{app}/")
    connected(page)
    page.fill("#composer-input", "what is 2+3?")
    page.keyboard.press("Enter")
    finished(page)
    second_tab = browser.new_context(storage_state=page.context.storage_state())  # the same session
    other = second_tab.new_page()
    try:
        other.goto(page.url)
        connected(other)
        wait_until(other, "document.querySelectorAll('#messages .message.user').length === 1")

        page.fill("#composer-input", "what is 6*7?")
        page.keyboard.press("Enter")

        wait_until(other, "document.querySelectorAll('#messages .message.user').length === 2")
        texts = other.locator("#messages .message.user .message-text").all_text_contents()
        assert texts == ["what is 2+3?", "what is 6*7?"]
        finished(other)
        # Before the answer, as in the tab that sent it.
        order = other.evaluate(
            "() => [...document.querySelectorAll('#messages > .message')].map((m) => m.classList.contains('user'))"
        )
        assert order == [True, False, True, False]
    finally:
        second_tab.close()


def test_on_a_phone_the_composer_sits_at_the_foot_of_the_screen_and_the_attach_button_shows_its_icon(
    app, browser, page
):
    phone = browser.new_context(storage_state=page.context.storage_state(), viewport={"width": 390, "height": 844})
    try:
        tab = phone.new_page()
        tab.goto(f"{app}/")
        connected(tab)
        composer = tab.locator(".composer").bounding_box()
        assert abs(composer["y"] + composer["height"] - 844) <= 1  # not right under a short conversation
        assert tab.locator("#attach svg.icon").count() == 1  # a drawing, not a character the fonts may lack
    finally:
        phone.close()
