"""The approvals inbox in real Chromium, against the real app (Daphne) and a scripted model server: a run started
from the chat (a websocket `message.send` from the thread's tab) waits for approval; the person decides from /inbox
on a phone's viewport; the thread's tab, open all along, follows.

The schedules that start runs without a person are built beside this (issue 39): a run started from the chat waits
the same way (a ToolCall awaiting approval of a waiting run), which is what the inbox lists.
"""

import json

import pytest

from tests.e2e import test_browser_approvals as approvals
from tests.e2e.test_browser_approvals import ARGS, ASK, DONE, INIT_SCRIPT, PASSWORD, USER, WAITING, ask
from tests.support.browser import connected, screenshot, sign_in

# The approval tests' fixtures: the app in Daphne with a scripted model server, on a migrated copy of the database.
migrated_db = approvals.migrated_db
start_app = approvals.start_app

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)

PHONE = {"viewport": {"width": 375, "height": 740}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
ITEM = ".inbox-item[data-kind='approval']"


@pytest.fixture
def desktop(browser):
    context = browser.new_context(viewport={"width": 900, "height": 760})
    context.add_init_script(INIT_SCRIPT)
    yield context
    context.close()


@pytest.fixture
def phone(browser):
    context = browser.new_context(**PHONE)
    context.add_init_script(INIT_SCRIPT)
    yield context
    context.close()


def thread_tab(context, url):
    page = context.new_page()
    sign_in(page, url, USER, PASSWORD)
    return page


def inbox_tab(context, url):
    page = context.new_page()
    sign_in(page, url, USER, PASSWORD)
    page.goto(f"{url}/inbox")
    connected(page)
    return page


def badge(page):
    return page.locator("#inbox-count")


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def within_the_screen(page, locator) -> bool:
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    width = page.viewport_size["width"]
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width


def test_approved_from_the_inbox_on_a_phone_the_run_finishes_and_the_threads_tab_follows(start_app, desktop, phone):
    app = start_app([ASK, DONE])
    chat = thread_tab(desktop, app.url)
    inbox = inbox_tab(phone, app.url)
    expect(inbox.locator("#inbox-empty")).to_be_visible()
    expect(badge(inbox)).to_be_hidden()

    ask(chat)  # started from the chat: a message.send over the thread's socket
    expect(chat.locator(WAITING).locator(".decide-approve")).to_be_visible()
    thread_path = chat.evaluate("() => location.pathname")

    # Live, without a reload: the item arrives in the inbox, and both top bars count it.
    item = inbox.locator(ITEM)
    expect(item).to_have_count(1)
    expect(item.locator(".inbox-tool")).to_have_text("send_email")
    assert item.locator(".inbox-thread-link").get_attribute("href") == thread_path
    assert json.loads(item.locator(".tool-args-text").text_content()) == ARGS
    expect(badge(inbox)).to_contain_text("1")
    expect(badge(chat)).to_contain_text("1")
    expect(inbox.locator("#inbox-empty")).to_be_hidden()

    # A phone's width: nothing scrolls sideways, and every control is on the screen.
    assert no_horizontal_scroll(inbox)
    for control in (".decide-approve", ".decide-edit", ".decide-reject", ".decide-respond", ".approval-for-thread"):
        assert within_the_screen(inbox, item.locator(control)), control
    screenshot(inbox, "inbox-phone.png", full_page=True)
    screenshot(chat, "inbox-count-chat.png")

    item.locator(".decide-approve").tap()
    expect(item.locator(".tool-decision")).to_have_text(f"Approved by {USER}")
    expect(item.locator(".decide-approve")).to_have_count(0)
    expect(badge(inbox)).to_be_hidden()

    # The thread's tab follows: the decision, the result, the answer; its count goes too.
    done = chat.locator(".tool-card[data-status='success']")
    expect(done.locator(".tool-decision")).to_have_text(f"Approved by {USER}")
    expect(done.locator(".tool-result-text")).to_have_text("sent to a@example.com: hi")
    expect(chat.locator(".message.assistant .message-text").last).to_have_text("Done.")
    expect(badge(chat)).to_be_hidden()
    assert no_horizontal_scroll(inbox)

    sent = [f for f in inbox.evaluate("window.__sent") if f.get("type") == "tool_call.decide"]
    assert [(f["decision"], f["tool_call"]) for f in sent] == [("approve", done.get_attribute("data-tool-call-id"))]


def test_an_edit_from_the_inbox_shows_what_changed_and_runs_the_new_arguments(start_app, desktop, phone):
    app = start_app([ASK, DONE])
    chat = thread_tab(desktop, app.url)
    ask(chat)
    expect(chat.locator(WAITING).locator(".decide-approve")).to_be_visible()

    inbox = inbox_tab(phone, app.url)  # the item is on the page as it loads
    item = inbox.locator(ITEM)
    expect(badge(inbox)).to_contain_text("1")
    item.locator(".decide-edit").tap()
    editor = item.locator(".approval-args-input")
    assert json.loads(editor.input_value()) == ARGS
    editor.fill(json.dumps({"to": "b@example.com", "subject": "hi"}))
    assert no_horizontal_scroll(inbox)
    item.locator(".approval-edit-submit").tap()

    expect(item.locator(".tool-decision")).to_have_text(f"Edited by {USER}")
    expect(item.locator(".tool-args-changes")).to_have_text("Changed: to")
    expect(item.locator(".tool-args-original")).to_contain_text("a@example.com")

    done = chat.locator(".tool-card[data-status='success']")
    expect(done.locator(".tool-result-text")).to_have_text("sent to b@example.com: hi")
    expect(done.locator(".tool-args-changes")).to_have_text("Changed: to")
    expect(chat.locator(".message.assistant .message-text").last).to_have_text("Done.")


def test_decided_in_the_thread_first_the_inbox_says_so_and_its_decision_is_refused(start_app, desktop, phone):
    app = start_app([ASK, DONE])
    chat = thread_tab(desktop, app.url)
    ask(chat)
    card = chat.locator(WAITING)
    expect(card.locator(".decide-approve")).to_be_visible()
    inbox = inbox_tab(phone, app.url)
    item = inbox.locator(ITEM)
    expect(item.locator(".decide-reject")).to_be_visible()

    inbox.evaluate("() => { window.__deaf = true; }")  # it does not hear of the thread's decision in time
    card.locator(".decide-reject").click()
    card.locator(".approval-reject-submit").click()
    expect(chat.locator(".tool-card .tool-decision")).to_have_text(f"Rejected by {USER}")

    item.locator(".decide-approve").tap()
    expect(item.locator(".approval-message")).to_contain_text("Already decided")
    expect(chat.locator(".message.assistant .message-text").last).to_have_text("Done.")
    assert chat.locator(".tool-card[data-status='rejected']").count() == 1

    inbox.evaluate("() => { window.__deaf = false; }")
    inbox.reload()
    connected(inbox)
    expect(inbox.locator("#inbox-empty")).to_be_visible()
    expect(badge(inbox)).to_be_hidden()
