"""The sidebar's dates, pins and archive, the delete dialog, the demo notice and the connection state in real
Chromium: chats grouped by date with times that stay current, pin and archive kept across a reload and shown in a
second tab, the dialog's focus and Escape, the notice dismissed for good, the connection shown only when lost, and
the sidebar's buttons on a phone."""

import re

import pytest

from tests.e2e.test_browser_chat import finished
from tests.support.browser import connected, screenshot, sign_in, wait_until
from tests.support.processes import manage, served_app

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-sidebar-dates")
    with served_app(tmp_path, {"ada": "lovelace-1815"}, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0.01") as both:
        yield both


@pytest.fixture(scope="module")
def app(served):
    return served[0]


@pytest.fixture(scope="module")
def env(served):
    return served[1]


def chat_aged(env, title: str, days: float) -> None:
    """A chat of ada's last active `days` ago (written in the database, as time would have left it)."""
    manage(
        env,
        "shell",
        "-c",
        "from datetime import timedelta; from django.utils import timezone; from chat.models import Thread; "
        "from django.contrib.auth.models import User; "
        f"t = Thread.objects.create(owner=User.objects.get(username='ada'), title={title!r}); "
        f"Thread.objects.filter(pk=t.pk).update(updated_at=timezone.now() - timedelta(days={days}))",
    )


def labelled(page) -> list[tuple[str, str]]:
    """(the date group a chat heads, or "", its title) for each chat listed, in order."""
    return page.evaluate(
        "() => [...document.querySelectorAll('#thread-list .thread-item')].filter((li) => !li.hidden)"
        ".map((li) => [li.dataset.groupLabel || '', li.querySelector('.thread-title').textContent])"
    )


def ask(page, text):
    connected(page)
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")
    wait_until(page, "document.querySelector('#messages .message.assistant')")
    finished(page)


def test_chats_are_grouped_by_date_and_their_times_stay_current(env, app, browser):
    chat_aged(env, "From yesterday", 1)  # 24 hours ago: always yesterday
    chat_aged(env, "From last week", 4)
    chat_aged(env, "From long ago", 200)
    context = browser.new_context()
    page = context.new_page()
    page.clock.install()
    sign_in(page, app, "ada", "lovelace-1815")
    ask(page, "what is 2+3?")
    wait_until(page, "document.querySelectorAll('#thread-list .thread-item').length === 4")
    listed = labelled(page)
    assert [title for _, title in listed] == ["what is 2+3?", "From yesterday", "From last week", "From long ago"]
    assert [label for label, _ in listed[:3]] == ["Today", "Yesterday", "Previous 7 days"]
    assert listed[3][0] not in ("", "Today", "Yesterday", "Previous 7 days", "Previous 30 days")  # its month
    screenshot(page, "sidebar-dates.png")
    today = thread_item(page, "what is 2+3?").locator(".thread-time")
    expect(today).to_have_text("just now")
    page.clock.fast_forward("05:00")  # five minutes: the list's clock ticks every 30 s
    expect(today).to_have_text("5 min ago")
    context.close()


def thread_item(page, title):
    return page.locator("#thread-list .thread-item", has_text=title)


def test_pin_and_archive_hold_after_a_reload_and_show_in_a_second_tab(app, browser):
    first = browser.new_context()
    page = first.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    ask(page, "pin me please")
    second = browser.new_context(storage_state=first.storage_state())
    other = second.new_page()
    other.goto(f"{app}/")
    connected(other)

    item = thread_item(page, "pin me please")
    item.hover()
    item.locator(".thread-pin").click()
    expect(page.locator("#thread-list .thread-item").first).to_contain_text("pin me please")
    expect(other.locator("#thread-list .thread-item").first).to_contain_text("pin me please")
    page.reload()
    expect(page.locator("#thread-list .thread-item").first).to_have_attribute("data-pinned", "true")

    item = thread_item(page, "pin me please")
    item.hover()
    item.locator(".thread-archive").click()
    expect(thread_item(other, "pin me please")).to_have_count(0)
    other.reload()
    expect(thread_item(other, "pin me please")).to_have_count(0)
    expect(other.locator("#archived-count")).to_have_text("1")
    first.close()
    second.close()


def test_the_delete_dialog_takes_the_focus_and_escape_gives_it_back(app, browser):
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    ask(page, "delete me maybe")
    item = thread_item(page, "delete me maybe")
    item.hover()
    delete = item.locator(".thread-delete")
    delete.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("dialog.app-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    screenshot(page, "delete-dialog.png")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(delete).to_be_focused()
    expect(item).to_have_count(1)  # nothing deleted
    context.close()


def test_the_demo_notice_stays_dismissed_after_a_reload(app, browser):
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    expect(page.locator("#demo-banner")).to_be_visible()
    page.click("#demo-banner-close")
    expect(page.locator("#demo-banner")).to_be_hidden()
    page.reload()
    connected(page)
    expect(page.locator("#demo-banner")).to_be_hidden()
    ask(page, "what is 2+3?")
    expect(page.locator(".demo-badge").first).to_be_visible()  # the answers still say it
    context.close()


def test_the_connection_is_shown_only_when_it_is_lost(app, browser):
    context = browser.new_context()
    page = context.new_page()
    sockets = []

    def through(socket):  # the page's socket, passed through to the server, and closable from here
        socket.connect_to_server()
        sockets.append(socket)

    page.route_web_socket(re.compile(r".*/ws/chat/.*"), through)
    sign_in(page, app, "ada", "lovelace-1815")
    state = page.locator("#connection-state")
    expect(state).to_be_hidden()
    sockets[-1].close(code=1011, reason="dropped by the test")
    expect(state).to_be_visible()
    expect(state).to_be_hidden()  # reconnected
    assert len(sockets) == 2
    context.close()


def test_on_a_phone_every_chats_buttons_are_on_screen(app, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    ask(page, "on a phone")
    page.click("#sidebar-toggle")
    item = thread_item(page, "on a phone")
    for name in ("pin", "archive", "rename", "delete"):
        box = item.locator(f".thread-{name}").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, name
    assert page.evaluate("() => document.documentElement.scrollWidth") == 390
    context.close()


def test_a_chat_five_days_and_a_minute_old_says_five_days_ago(env, app, browser):
    chat_aged(env, "Five days and a minute", 5 + 1 / 1440)
    chat_aged(env, "Six days less a minute", 6 - 1 / 1440)
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    expect(thread_item(page, "Five days and a minute").locator(".thread-time")).to_have_text("5 days ago")
    expect(thread_item(page, "Six days less a minute").locator(".thread-time")).to_have_text("5 days ago")
    context.close()
