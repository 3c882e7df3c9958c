"""The chat without a mouse and without eyes, in real Chromium against the real app and a scripted model server.

Keyboard only: a message sent, a call approved, its card opened, the answer regenerated and its versions switched,
with page.keyboard alone, every control reached showing its focus. Screen reader: the page's live regions, watched
with a MutationObserver while answers stream token by token, change once per finished answer (with its text), never
per token."""

from __future__ import annotations

import httpx
import pytest

from tests.support.browser import connected, require_chromium, sign_in, wait_until
from tests.support.processes import Daphne, app_environment, create_user, manage, model_server

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)

USER, PASSWORD = "grace", "hopper-1906"
EMAIL = {"tool_calls": [{"id": "c1", "name": "send_email", "arguments": {"to": "a@example.com", "subject": "hi"}}]}
SENT, SENT_AGAIN = "The email is on its way.", "Sent it, as asked."
# Long enough to arrive in many deltas (three characters a chunk, 15 ms apart).
FIRST = "The first answer streams in slowly, a few characters at a time, so that every token is a change of the page."
SECOND = "A second answer, streamed the same way, is announced once more, on its own, when it is finished."

# What focus looks like on the focused element: an outline or a ring (a box-shadow) while :focus-visible matches.
FOCUS = """() => {
  const node = document.activeElement;
  const style = getComputedStyle(node);
  const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
  return {
    name: node.getAttribute("aria-label") || node.textContent.trim().slice(0, 40) || node.id || node.tagName,
    visible: node !== document.body && node.matches(":focus-visible") && (outline || style.boxShadow !== "none"),
  };
}"""

# Records what the page's live regions say: after each batch of changes, the text of every live region that
# changed, when it differs from what that region said last. Also how many times the last answer's text grew.
WATCH = """() => {
  const LIVE = "[aria-live]:not([aria-live=off]), [role=status], [role=log], [role=alert], [role=marquee], "
    + "[role=timer]";
  window.__said = [];
  window.__growth = 0;
  const last = new Map();
  let answer = "";
  new MutationObserver((records) => {
    const touched = new Set();
    for (const record of records) {
      const node = record.target.nodeType === Node.ELEMENT_NODE ? record.target : record.target.parentElement;
      const region = node && node.closest(LIVE);
      if (region) touched.add(region);
    }
    for (const region of touched) {
      const text = region.textContent.replace(/\\s+/g, " ").trim();
      if (text && text !== last.get(region)) window.__said.push(text);
      last.set(region, text);
    }
    const texts = document.querySelectorAll("#messages .message.assistant .message-text");
    const now = texts.length ? texts[texts.length - 1].textContent : "";
    if (now !== answer) { window.__growth += 1; answer = now; }
  }).observe(document.body, {childList: true, subtree: true, characterData: true, attributes: true,
                             attributeFilter: ["hidden", "aria-live", "role"]});
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("keyboard-only")
    with model_server([], tmp_path) as model_url:
        env = app_environment(
            tmp_path,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="scripted",
            AGENTWEB_TOOL_MODULES="tests.support.approval_tools",
        )
        manage(env, "migrate", "--noinput")
        create_user(env, USER, PASSWORD)
        server = Daphne(env).start()
        try:
            yield server.url, model_url
        finally:
            server.stop()


@pytest.fixture
def page(browser, site):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    sign_in(page, site[0], USER, PASSWORD)
    yield page
    context.close()


def script(site, entries):
    httpx.post(f"{site[1]}/_script", json=entries).raise_for_status()


def finished(page):
    wait_until(page, "document.querySelector('#stop').hidden && !document.querySelector('.typing')")


def press_until(page, key: str, arrived: str, limit: int = 40) -> None:
    """Press `key` (Tab or Shift+Tab) until the focused element matches the CSS selector `arrived`; every element
    the focus passes on its way must show it."""
    for _ in range(limit):
        page.keyboard.press(key)
        focus = page.evaluate(FOCUS)
        assert focus["visible"], f"the focus on {focus['name']!r} does not show"
        if page.evaluate("(selector) => document.activeElement.matches(selector)", arrived):
            return
    raise AssertionError(f"{limit} presses of {key} never reached {arrived}")


def test_send_approve_open_a_card_and_switch_versions_with_the_keyboard_alone(page, site):
    script(site, [EMAIL, {"text": SENT}, {"text": SENT_AGAIN}])
    expect(page.locator("#composer-input")).to_be_focused()  # where the page puts the keyboard
    page.keyboard.type("email a@example.com to say hi")
    page.keyboard.press("Enter")
    waiting = page.locator(".tool-card[data-status='awaiting_approval']")
    expect(waiting).to_be_visible()

    press_until(page, "Shift+Tab", ".decide-approve")
    page.keyboard.press("Enter")
    answer = page.locator("#messages .message.assistant .message-text").last
    expect(answer).to_have_text(SENT)
    finished(page)
    card = page.locator(".tool-card").first
    expect(card).to_have_attribute("data-status", "success")

    if card.get_attribute("open") is not None:  # still open from the approval: closed first, to open it again
        card.locator("summary").focus()
        page.keyboard.press("Enter")
        expect(card).not_to_have_attribute("open", "")
    page.locator("#composer-input").focus()
    press_until(page, "Shift+Tab", ".tool-summary")
    page.keyboard.press("Enter")
    expect(card).to_have_attribute("open", "")
    expect(card.locator(".tool-result-text")).to_contain_text("sent")

    press_until(page, "Tab", ".turn-regenerate")
    page.keyboard.press("Enter")
    expect(answer).to_have_text(SENT_AGAIN)
    finished(page)
    count = page.locator("#messages .message.assistant .version-count")
    expect(count).to_have_text("2 / 2")

    page.locator("#composer-input").focus()
    press_until(page, "Shift+Tab", ".version-prev:not([disabled])")
    page.keyboard.press("Enter")
    expect(count).to_have_text("1 / 2")
    expect(answer).to_have_text(SENT)


def test_each_finished_answer_is_announced_once_not_token_by_token(page, site):
    script(site, [{"text": FIRST, "delay_ms": 15}, {"text": SECOND, "delay_ms": 15}])
    page.evaluate(WATCH)
    page.fill("#composer-input", "tell me something")
    page.keyboard.press("Enter")
    expect(page.locator("#messages .message.assistant .message-text").last).to_have_text(FIRST)
    finished(page)
    wait_until(page, "window.__said.length > 0")
    first_growth = page.evaluate("window.__growth")
    assert first_growth > 5, "the answer did not stream in pieces: the check proves nothing"
    said = page.evaluate("window.__said")
    assert len(said) == 1, f"{len(said)} announcements for one answer: {said[:5]}"
    assert FIRST in said[0]

    connected(page)
    page.fill("#composer-input", "and another thing")
    page.keyboard.press("Enter")
    expect(page.locator("#messages .message.assistant .message-text").last).to_have_text(SECOND)
    finished(page)
    wait_until(page, "window.__said.length > 1")
    said = page.evaluate("window.__said")
    assert len(said) == 2, f"{len(said)} announcements for two answers: {said[:5]}"
    assert SECOND in said[1]
