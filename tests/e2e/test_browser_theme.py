"""The theme in real Chromium: the system's choice followed (and followed again when it changes while the page is
open), a choice made on the settings page kept on every page after a reload; each colour written once in app.css
(light-dark()), so the checks look at what the page paints."""

import pytest

from tests.support.browser import require_chromium, screenshot, sign_in, wait_until
from tests.support.processes import served_app

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
LIGHT_BG, DARK_BG = "rgb(247, 247, 248)", "rgb(21, 23, 27)"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with served_app(tmp_path_factory.mktemp("browser-theme"), {"ada": "lovelace-1815"}, AGENTWEB_LLM_API="demo") as (
        base_url,
        _,
    ):
        yield base_url


def background(page) -> str:
    return page.evaluate("() => getComputedStyle(document.body).backgroundColor")


def test_the_system_theme_is_followed_even_when_it_changes_while_the_page_is_open(app, browser):
    context = browser.new_context(color_scheme="light")
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    assert background(page) == LIGHT_BG
    page.emulate_media(color_scheme="dark")
    wait_until(page, f"getComputedStyle(document.body).backgroundColor === '{DARK_BG}'")
    context.close()


def test_a_theme_chosen_in_settings_holds_on_the_chat_page_after_a_reload_whatever_the_system_says(app, browser):
    context = browser.new_context(color_scheme="light")
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    page.goto(f"{app}/settings/")
    page.check("#theme-form input[value=dark]")
    page.click("#theme-save")
    page.wait_for_load_state()
    assert background(page) == DARK_BG
    screenshot(page, "settings-dark.png")
    page.goto(f"{app}/")
    page.reload()
    assert background(page) == DARK_BG
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"

    page.goto(f"{app}/settings/")
    page.check("#theme-form input[value=light]")
    page.click("#theme-save")
    page.wait_for_load_state()
    page.emulate_media(color_scheme="dark")
    page.goto(f"{app}/")
    assert background(page) == LIGHT_BG
    context.close()
