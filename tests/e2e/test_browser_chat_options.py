"""A chat's own options in real Chromium, with the offline demo model: tools switched off in the Tools panel (by
keyboard, stored with the chat, locked while an answer is written) and the empty chat's starting prompts (shown,
sent on a click or a key, the picked agent's in place of the suggestions, wrapping on a phone).

AGENTWEB_SCREENSHOTS=1 also writes the panel with a tool switched off and the starting prompts to docs/screenshots/.
"""

import os

import pytest

from tests.support.browser import connected, require_chromium, sign_in, wait_until
from tests.support.processes import ROOT, app_environment, create_user, daphne, manage

USER, PASSWORD = "katherine", "johnson-1918"
PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1280, "height": 820}
SCREENSHOTS = ROOT / "docs" / "screenshots"
DEMO_PROMPTS = [
    "What is 23*19?",
    "What time is it in Europe/Paris?",
    "What is (17+4)*3, and what time is it in UTC?",
    "Hello! What can you do?",
]
TUTOR_PROMPTS = ["What is 2+2?", "Explain <b>fractions</b> simply."]

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-chat-options")
    # Slow enough that an answer is still being written when the test looks at the locked switches.
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0.05")
    manage(env, "migrate", "--noinput")
    create_user(env, USER, PASSWORD)
    manage(
        env,
        "shell",
        "-c",
        "from agents.models import Agent; "
        f"Agent.objects.create(slug='tutor', name='Maths tutor', starter_prompts={TUTOR_PROMPTS!r}); "
        "Agent.objects.create(slug='plain', name='Plain')",
    )
    with daphne(env) as base_url:
        yield base_url


@pytest.fixture
def page(app, browser):
    context = browser.new_context(viewport=WIDE)
    page = context.new_page()
    sign_in(page, app, USER, PASSWORD)
    yield page
    context.close()


def shoot(page, name):
    if os.environ.get("AGENTWEB_SCREENSHOTS"):
        page.screenshot(path=str(SCREENSHOTS / name))


def open_tools_by_keyboard(page):
    page.locator("#tools-toggle").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#tools-panel")).to_be_visible()
    expect(page.locator(".tool-switch[data-tool='calculator']")).to_be_visible()


def test_a_tool_switched_off_by_keyboard_before_the_first_message_stays_off_for_the_chat(page):
    open_tools_by_keyboard(page)
    switch = page.locator(".tool-switch[data-tool='calculator']")
    expect(switch).to_be_checked()
    assert switch.get_attribute("role") == "switch"
    assert switch.get_attribute("aria-label") == "Use calculator in this chat"
    for _ in range(20):  # Tab from the panel to the calculator's switch
        page.keyboard.press("Tab")
        if switch.evaluate("(node) => node === document.activeElement"):
            break
    expect(switch).to_be_focused()
    page.keyboard.press("Space")
    expect(switch).not_to_be_checked()
    expect(page.locator("#tools-off-count")).to_have_text("1 off")
    expect(page.locator("#tools-toggle")).to_have_attribute("aria-label", "Tools, 1 off in this chat")
    shoot(page, "tools-panel-switch-off.png")
    page.keyboard.press("Escape")
    expect(page.locator("#tools-panel")).to_be_hidden()

    # The demo model, without its calculator, answers with small talk: no tool card.
    page.fill("#composer-input", "What is 23*19?")
    page.keyboard.press("Enter")
    # While the answer is written the switches are locked, and the panel says why.
    page.click("#tools-toggle")
    expect(page.locator("#tools-locked")).to_be_visible()
    expect(page.locator(".tool-switch[data-tool='current_time']")).to_be_disabled()
    page.keyboard.press("Escape")
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("Hello!")
    wait_until(page, "document.querySelector('#stop').hidden")
    assert page.locator(".tool-card").count() == 0
    assert "/t/" in page.url

    page.reload()
    connected(page)
    expect(page.locator("#tools-off-count")).to_have_text("1 off")
    page.click("#tools-toggle")
    expect(page.locator("#tools-locked")).to_be_hidden()
    expect(page.locator(".tool-switch[data-tool='calculator']")).not_to_be_checked()
    expect(page.locator(".tool-switch[data-tool='current_time']")).to_be_enabled()


def test_switching_a_tool_back_on_in_a_stored_chat_lets_the_model_use_it_again(page):
    page.fill("#composer-input", "hello")
    page.keyboard.press("Enter")
    wait_until(page, "location.pathname.startsWith('/t/') && document.querySelector('#stop').hidden")
    page.click("#tools-toggle")
    switch = page.locator(".tool-switch[data-tool='calculator']")
    switch.click()
    expect(page.locator("#tools-off-count")).to_have_text("1 off")
    page.reload()  # stored: the thread's snapshot says so
    connected(page)
    expect(page.locator("#tools-off-count")).to_have_text("1 off")
    page.click("#tools-toggle")
    switch.click()
    expect(switch).to_be_checked()
    expect(page.locator("#tools-off-count")).to_be_hidden()
    page.keyboard.press("Escape")
    page.fill("#composer-input", "What is 23*19?")
    page.keyboard.press("Enter")
    expect(page.locator(".tool-card[data-status='success']")).to_have_count(1)


def test_the_empty_chat_offers_starting_prompts_and_one_sends_by_keyboard(page):
    starters = page.locator("#starters .starter")
    expect(starters).to_have_count(4)
    assert starters.all_text_contents() == DEMO_PROMPTS
    shoot(page, "starting-prompts.png")
    starters.first.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".message.user .message-text").first).to_have_text("What is 23*19?")
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("23*19 = 437")
    expect(page.locator("#starters")).to_have_count(0)  # gone with the empty chat


def test_a_click_on_a_starting_prompt_sends_it(page):
    page.locator("#starters .starter", has_text="Europe/Paris").click()
    expect(page.locator(".tool-card[data-status='success'] .tool-name")).to_have_text("current_time")
    expect(page.locator("#starters")).to_have_count(0)


def test_picking_an_agent_shows_its_prompts_as_text_and_unpicking_it_the_suggestions(page):
    starters = page.locator("#starters .starter")
    page.click(".agent-choice[data-slug='tutor']")
    expect(starters).to_have_count(2)
    assert starters.all_text_contents() == TUTOR_PROMPTS  # the markup shown, not applied
    assert page.locator("#starters b").count() == 0
    page.click(".agent-choice[data-slug='plain']")  # an agent without prompts of its own: the suggestions
    expect(starters).to_have_count(4)
    page.click(".agent-choice[data-slug='tutor']")
    page.click(".agent-choice[data-slug='tutor']")  # unpicked: no agent
    expect(starters).to_have_count(4)
    page.click(".agent-choice[data-slug='tutor']")
    starters.first.click()
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("2+2 = 4")
    expect(page.locator("#agent-label")).to_have_text("Maths tutor")


def test_on_a_phone_the_starting_prompts_wrap_inside_the_screen(app, browser):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in(page, app, USER, PASSWORD)
    starters = page.locator("#starters .starter")
    expect(starters).to_have_count(4)
    boxes = [box for box in (s.bounding_box() for s in starters.all()) if box]
    assert len(boxes) == 4
    assert all(box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] for box in boxes)
    assert len({round(box["y"]) for box in boxes}) > 1  # more than one row
    page.click("#tools-toggle")
    panel = page.locator("#tools-panel")
    for switch in panel.locator(".tool-switch").all():
        box = switch.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    context.close()
