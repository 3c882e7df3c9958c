"""The chat page's product details in Chromium (issue 41, "The chat"), as a person notices them: message actions
hidden until hover or focus with a mouse and always there on a touch screen; a mark per author; "Jump to latest"
while reading higher up during a stream; the Tools panel next to its button; the sidebar as a drawer on a phone
(focus kept inside, Escape and a swipe close it); the demo notice on one line on a phone; the composer's Enter hint
gone on touch; sent files as a gallery opening in an in-page viewer; every icon-only button named."""

import pytest

from tests.attachments.files import png
from tests.support.browser import connected, require_chromium, screenshot, sign_in, touch_swipe, wait_until
from tests.support.processes import served_app

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
# Forty lines: the question alone is taller than the window, so the answer streams below the fold.
LONG_QUESTION = "\n".join(f"line {n} of a long note" for n in range(40))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    # A slow demo (a quarter second a word: its greeting streams for some ten seconds) so a test can act mid-stream.
    tmp_path = tmp_path_factory.mktemp("chat-pages")
    with served_app(
        tmp_path,
        {"ada": "lovelace-1815"},
        AGENTWEB_LLM_API="demo",
        AGENTWEB_DEMO_DELAY="0.25",
        AGENTWEB_LLM_SUPPORTS_IMAGES="true",
    ) as (base_url, _):
        yield base_url


def finished(page):
    wait_until(page, "document.querySelector('#stop').hidden && !document.querySelector('.typing')", timeout=60)


def send(page, text):
    connected(page)
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")
    wait_until(page, "document.querySelector('#messages .message.assistant')")


@pytest.fixture(scope="module")
def chat(app, browser):
    """A chat with one finished answer; its address."""
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    send(page, "hello")
    wait_until(page, "location.pathname.startsWith('/t/')")
    finished(page)
    url = page.url
    context.close()
    return url


def opacity(locator):
    return locator.evaluate("(n) => getComputedStyle(n).opacity")


def test_message_actions_show_on_hover_and_focus_with_a_mouse(app, browser, chat):
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815", connect=False)
    page.goto(chat)
    answer = page.locator("#messages .message.assistant").last
    actions = answer.locator(".answer-actions")
    expect(answer.locator(".turn-regenerate")).to_be_attached()
    page.mouse.move(1, 1)
    wait_until(page, "getComputedStyle(document.querySelector('.message.assistant .answer-actions')).opacity === '0'")
    answer.hover()
    wait_until(page, "getComputedStyle(document.querySelector('.message.assistant .answer-actions')).opacity === '1'")
    # Each is an icon with its name for screen readers and in its tooltip.
    regenerate = page.get_by_role("button", name="Regenerate")
    expect(regenerate).to_have_attribute("title", "Ask again (this answer is kept as a version)")
    expect(page.get_by_role("button", name="Copy the answer")).to_have_count(1)
    expect(page.get_by_role("button", name="Edit")).to_have_count(1)
    page.mouse.move(1, 1)
    wait_until(page, "getComputedStyle(document.querySelector('.message.assistant .answer-actions')).opacity === '0'")
    page.get_by_role("button", name="Copy the answer").focus()  # from the keyboard
    wait_until(page, "getComputedStyle(document.querySelector('.message.assistant .answer-actions')).opacity === '1'")
    assert opacity(actions) == "1"
    screenshot(page, "message-actions.png")
    context.close()


def test_message_actions_are_always_shown_on_a_touch_screen(app, browser, chat):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815", connect=False)
    page.goto(chat)
    expect(page.locator(".message.assistant .turn-regenerate")).to_be_attached()
    assert opacity(page.locator(".message.assistant .answer-actions")) == "1"
    assert opacity(page.locator(".message.user .turn-actions")) == "1"
    context.close()


def test_each_author_has_a_mark_naming_the_model_on_hover(app, browser, chat):
    page = browser.new_page()
    sign_in(page, app, "ada", "lovelace-1815", connect=False)
    page.goto(chat)
    expect(page.locator(".message.user .author-mark").first).to_have_text("A")
    expect(page.locator(".message.user .author-mark").first).to_have_attribute("title", "You (ada)")
    mark = page.locator(".message.assistant .author-mark").first
    expect(mark).to_have_attribute("title", page.locator("#model-label").text_content().strip())
    page.close()


def test_jump_to_latest_appears_when_scrolled_up_mid_stream_and_brings_you_to_the_bottom(app, browser):
    context = browser.new_context(viewport={"width": 900, "height": 500})
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    jump = page.locator("#jump-latest")
    send(page, LONG_QUESTION)
    expect(jump).to_be_hidden()  # following the answer: nothing to jump to
    wait_until(page, "!document.querySelector('#stop').hidden")
    page.locator("#messages").hover()
    page.mouse.wheel(0, -3000)  # the person reads their question again while the answer streams
    expect(jump).to_be_visible()
    expect(jump).to_have_accessible_name("Jump to latest")
    screenshot(page, "jump-to-latest.png")
    jump.click()
    expect(jump).to_be_hidden()
    wait_until(page, "(m => m.scrollHeight - m.scrollTop - m.clientHeight < 48)(document.getElementById('messages'))")
    finished(page)
    wait_until(page, "(m => m.scrollHeight - m.scrollTop - m.clientHeight < 48)(document.getElementById('messages'))")
    context.close()


def test_the_tools_panel_opens_next_to_its_button(app, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    sign_in(page, app, "ada", "lovelace-1815")
    page.click("#tools-toggle")
    expect(page.locator("#tools-panel")).to_be_visible()
    button = page.locator("#tools-toggle").bounding_box()
    panel = page.locator("#tools-panel").bounding_box()
    assert abs((panel["x"] + panel["width"]) - (button["x"] + button["width"])) <= 1
    assert 0 <= panel["y"] - (button["y"] + button["height"]) <= 16
    page.close()


def test_on_a_phone_the_sidebar_is_a_drawer_that_keeps_the_focus_and_closes_with_escape_or_a_swipe(app, browser, chat):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    sidebar = page.locator("#sidebar")
    toggle = page.locator("#sidebar-toggle")
    expect(sidebar).to_be_hidden()
    expect(toggle).to_have_accessible_name("Chats")
    toggle.click()
    expect(sidebar).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    box = sidebar.bounding_box()
    assert box["x"] == 0 and box["height"] >= 800  # over the conversation, the screen's height
    # A modal dialog named "Chats", the navigation landmark inside it still one (the dialog wraps the <nav>).
    drawer = page.get_by_role("dialog", name="Chats")
    expect(drawer).to_have_attribute("aria-modal", "true")
    expect(drawer.get_by_role("navigation", name="Chats")).to_be_visible()
    screenshot(page, "sidebar-drawer-phone.png")
    for _ in range(12):  # Tab round and round: the focus stays in the drawer
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.getElementById('sidebar').contains(document.activeElement)")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => document.getElementById('sidebar').contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(sidebar).to_be_hidden()
    expect(toggle).to_be_focused()
    expect(toggle).to_have_attribute("aria-expanded", "false")

    # Real touches (Chromium's touch emulation): the swipe from the edge is the drawer's, not the browser's "Back"
    # (the sign-in page is behind this one in the tab's history).
    cdp = context.new_cdp_session(page)
    chat_url = page.url
    touch_swipe(cdp, 4, 220)  # from the screen's left edge, to the right
    expect(sidebar).to_be_visible()
    assert page.url == chat_url
    touch_swipe(cdp, 300, 40)  # back to the left
    expect(sidebar).to_be_hidden()
    context.close()


def test_on_a_phone_the_demo_notice_is_one_line_and_the_enter_hint_is_gone(app, browser):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    expect(page.locator("#demo-banner")).to_be_visible()
    banner = page.locator("#demo-banner").bounding_box()
    close = page.locator("#demo-banner-close").bounding_box()
    assert banner["height"] <= close["height"] + 16, (banner, close)  # one line: the button's height
    placeholder = page.locator("#composer-input").get_attribute("placeholder")
    assert "Enter" not in placeholder and placeholder.startswith("Ask something")
    screenshot(page, "phone-empty-chat.png")
    context.close()

    desktop = browser.new_page()
    sign_in(desktop, app, "ada", "lovelace-1815")
    assert "Enter to send" in desktop.locator("#composer-input").get_attribute("placeholder")
    desktop.close()


def test_sent_files_are_a_gallery_that_opens_in_a_viewer_and_gives_the_focus_back(app, browser, tmp_path):
    picture = tmp_path / "red.png"
    picture.write_bytes(png(40, 30))
    notes = tmp_path / "notes.txt"
    notes.write_text("some notes")
    page = browser.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    page.set_input_files("#attach-input", [str(picture), str(notes)])
    wait_until(page, "document.querySelectorAll('#attachment-chips .attachment-chip[data-attachment-id]').length === 2")
    page.fill("#composer-input", "look")
    page.keyboard.press("Enter")
    image = page.locator(".message.user .attachment.is-image")
    expect(image.locator(".attachment-name")).to_have_text("red.png")
    expect(page.locator(".message.user .attachment.is-file .attachment-name")).to_have_text("notes.txt")
    finished(page)  # the turn's end may draw the message again: measure the thumbnail that stays
    wait_until(page, "document.querySelector('.message.user .attachment-thumb').naturalWidth === 40")
    thumb = page.evaluate(
        "() => { const r = document.querySelector('.message.user .attachment-thumb').getBoundingClientRect();"
        " return [Math.round(r.width), Math.round(r.height)]; }"
    )
    assert thumb == [128, 96]  # one size, whatever the picture's

    image.locator(".attachment-link").click()
    viewer = page.get_by_role("dialog", name="red.png")
    expect(viewer).to_be_visible()
    expect(viewer.locator("img")).to_have_attribute("alt", "red.png")
    assert len(page.context.pages) == 1  # in the page: no tab opened for it
    page.keyboard.press("Escape")
    expect(viewer).to_have_count(0)
    expect(image.locator(".attachment-link")).to_be_focused()

    page.locator(".message.user .attachment.is-file .attachment-link").click()
    viewer = page.get_by_role("dialog", name="notes.txt")
    expect(viewer.get_by_role("link", name="Download")).to_be_visible()
    viewer.get_by_role("button", name="Close").click()
    expect(viewer).to_have_count(0)
    expect(page.locator(".message.user .attachment.is-file .attachment-link")).to_be_focused()
    finished(page)
    page.close()


@pytest.mark.parametrize("size", [PHONE, {"viewport": {"width": 1280, "height": 800}}], ids=["phone", "desktop"])
def test_every_icon_only_button_keeps_a_name(app, browser, chat, size):
    context = browser.new_context(**size)
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815", connect=False)
    page.goto(chat)
    expect(page.locator(".message.assistant .turn-regenerate")).to_be_attached()
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('button, summary, a.button')]
          .filter((b) => b.getClientRects().length)
          .filter((b) => !(b.getAttribute('aria-label') || '').trim() && !(b.textContent || '').trim()
                          && !b.getAttribute('aria-labelledby'))
          .map((b) => b.outerHTML.slice(0, 120))"""
    )
    assert unnamed == []
    context.close()
