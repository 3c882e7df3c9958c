"""A long sidebar in real Chromium: the rows out of sight cost the first paint nothing (content-visibility: auto,
static/chat/app.css), yet each is there when scrolled to, opens its chat, and shows its focus ring."""

import pytest

from tests.support.browser import connected, launch, sign_in
from tests.support.processes import app_environment, create_user, daphne, manage

sync_api = pytest.importorskip("playwright.sync_api")

CHATS = 60


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-sidebar-long")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo")
    manage(env, "migrate", "--noinput")
    create_user(env, "ada", "lovelace-1815")
    made = (
        "from django.contrib.auth.models import User; from chat.models import Thread; "
        "ada = User.objects.get(username='ada'); "
        f"[Thread.objects.create(owner=ada, title=f'chat number {{i}}') for i in range({CHATS})]"
    )
    manage(env, "shell", "-c", made)
    with daphne(env) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def page(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        sign_in(page, app, "ada", "lovelace-1815")
        yield page
        browser.close()


def test_rows_out_of_sight_are_skipped_until_scrolled_to_then_open_their_chat(app, page):
    page.goto(f"{app}/")
    connected(page)
    rows = page.locator("#thread-list .thread-item")
    assert rows.count() == CHATS
    last = rows.last  # the oldest chat, far below the sidebar's fold
    # What a row shows is skipped (neither laid out nor painted) while the row is out of sight.
    skipped = "(li) => !li.querySelector('.thread-title').checkVisibility({contentVisibilityAuto: true})"
    assert rows.first.evaluate(skipped) is False
    assert last.evaluate(skipped) is True

    last.scroll_into_view_if_needed()
    page.wait_for_function(f"(li) => !({skipped})(li)", arg=last.element_handle(), polling="raf")
    sync_api.expect(last.locator(".thread-title")).to_have_text("chat number 0")
    href = last.locator(".thread-link").get_attribute("href")
    last.locator(".thread-title").click()
    page.wait_for_url(f"**{href}")


def test_a_rows_focus_ring_is_drawn_inside_it(app, page):
    page.goto(f"{app}/")
    connected(page)
    link = page.locator("#thread-list .thread-item").nth(40).locator(".thread-link")
    link.focus()
    page.keyboard.press("Shift+Tab")  # the keyboard's focus, so :focus-visible holds
    page.keyboard.press("Tab")
    ring = link.evaluate(
        "(a) => { const s = getComputedStyle(a); return [a.matches(':focus-visible'), s.outlineStyle,"
        " parseFloat(s.outlineWidth), parseFloat(s.outlineOffset)]; }"
    )
    focused, style, width, offset = ring
    assert focused and style == "solid" and width > 0
    assert offset + width <= 0  # within the row, whose paint is clipped to it
