"""Languages in real Chromium: the page follows the browser's language (German words, German dates, strings the
page's JavaScript builds in German too); a language chosen in settings changes the pages and follows the person to
another browser; and the layout holds in German's long words and right to left (a test-only language: English
words, Arabic's direction), on a desktop and on a phone: nothing leaves the screen sideways, no control covers
another."""

import datetime
import re

import pytest

from tests.support.browser import connected, require_chromium, screenshot, sign_in, touch_swipe, wait_until
from tests.support.catalogues import PSEUDO_RTL, compiled, pseudo_rtl_catalogue
from tests.support.german import GERMAN_MONTHS
from tests.support.processes import served_app

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect


USERS = {"ada": "lovelace-1815", "grace": "hopper-1906", "rtl": "right-to-left-1"}
DESKTOP, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    compiled()
    with served_app(tmp_path_factory.mktemp("browser-languages"), USERS, AGENTWEB_LLM_API="demo") as (base_url, _):
        yield base_url


@pytest.fixture(scope="module")
def rtl_app(tmp_path_factory):
    """The app with the right-to-left pseudo-language offered (tests/support/rtl_settings.py)."""
    compiled()
    folder = pseudo_rtl_catalogue(tmp_path_factory.mktemp("pseudo-locale"))
    with served_app(
        tmp_path_factory.mktemp("browser-languages-rtl"),
        USERS,
        AGENTWEB_LLM_API="demo",
        DJANGO_SETTINGS_MODULE="tests.support.rtl_settings",
        AGENTWEB_TEST_PSEUDO_LOCALE=str(folder),
    ) as (base_url, _):
        yield base_url


def ask_for_a_sum(page) -> None:
    """A turn with a tool card (the demo model calls its calculator), finished."""
    page.fill("#composer-input", "what is 2+3?")
    page.keyboard.press("Enter")
    page.wait_for_selector(".tool-card[data-status='success']")
    page.wait_for_selector("article.message.assistant[data-status='complete']")


def test_the_page_follows_the_browsers_language_with_its_dates_and_the_scripts_strings(app, browser):
    context = browser.new_context(locale="de-DE", viewport=DESKTOP)
    page = context.new_page()
    page.goto(f"{app}/")
    expect(page.locator("h1")).to_have_text("Anmelden")
    assert page.evaluate("() => document.documentElement.lang") == "de"
    sign_in(page, app, "ada", USERS["ada"])

    # Written by the server (the template) and by the page's script (socket state, tool card status).
    expect(page.locator("#composer-input")).to_have_attribute("placeholder", re.compile(r"^Frag etwas"))
    expect(page.locator("#connection-state")).to_have_text("verbunden")
    ask_for_a_sum(page)
    expect(page.locator(".tool-card .status").first).to_have_text("erfolgreich")
    expect(page.locator(".tool-card .tool-section-title").first).to_have_text("Argumente")
    screenshot(page, "chat-de.png")

    # Dates: the sidebar's (Intl, in the page's language) and the server's (Django's German formats).
    item = page.locator("#thread-list .thread-item").first
    expect(item).to_have_attribute("data-group-label", "Heute")
    wait_until(page, "document.querySelector('#thread-list .thread-time')?.title")
    title = item.locator(".thread-time").get_attribute("title")
    assert re.fullmatch(r"\d{1,2}\.\d{1,2}\.\d{4}, \d{2}:\d{2}:\d{2}", title), title

    page.goto(f"{app}/settings/")
    page.fill("#api-key-name", "Editor")
    page.click("#api-key-create")
    expect(page.locator("h1")).to_have_text("Dein neuer API-Schlüssel")
    page.goto(f"{app}/settings/")
    today = datetime.datetime.now(datetime.UTC).date()
    expect(page.locator("#api-keys")).to_contain_text(f"erstellt {today.day}. {GERMAN_MONTHS[today.month - 1]}")
    screenshot(page, "settings-de.png", full_page=True)
    context.close()


def test_a_language_chosen_in_settings_changes_the_pages_and_follows_the_person(app, browser):
    laptop = browser.new_context(locale="en-US", viewport=DESKTOP)
    page = laptop.new_page()
    sign_in(page, app, "grace", USERS["grace"])
    expect(page.locator("#send")).to_have_text("Send")
    page.goto(f"{app}/settings/")
    page.select_option("#language-select", "fr")
    page.click("#language-save")
    expect(page.locator("h1")).to_have_text("Paramètres")
    assert page.evaluate("() => document.documentElement.lang") == "fr"
    page.goto(f"{app}/")
    connected(page)
    expect(page.locator("#send")).to_have_text("Envoyer")
    expect(page.locator("#connection-state")).to_have_text("connecté")

    # Another browser, English, never told: once grace signs in, it is French too.
    phone = browser.new_context(locale="en-US", viewport=PHONE)
    other = phone.new_page()
    sign_in(other, app, "grace", USERS["grace"])
    expect(other.locator("#send")).to_have_text("Envoyer")

    # Back to the browser's language, on the laptop.
    page.goto(f"{app}/settings/")
    page.select_option("#language-select", "")
    page.click("#language-save")
    expect(page.locator("h1")).to_have_text("Settings")
    laptop.close()
    phone.close()


# --- layout -------------------------------------------------------------------------------------------------------

# Boxes that leave the screen on purpose: the skip link waits off screen until it is focused.
OFF_SCREEN_BY_DESIGN = ".skip-link"

LAYOUT_PROBLEMS = """
(offScreen) => {
  const width = document.documentElement.clientWidth;
  const problems = [];
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (el.classList.length ? "." + [...el.classList].join(".") : "");
  // Drawn: not hidden by display, visibility, opacity or a closed <details> (content-visibility), and not 1px.
  const shown = (el) => {
    const seen = { opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true };
    if (!el.checkVisibility(seen)) return false;
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1;
  };
  // Inside a box that clips or scrolls sideways, an element cannot leave the screen: that box is checked instead.
  const clipped = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") return true;
    }
    return false;
  };
  if (document.documentElement.scrollWidth > width + 1) {
    problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  }
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest(offScreen) || !shown(el) || clipped(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.left < -1 || r.right > width + 1) {
      problems.push(`${name(el)} leaves the screen: ${Math.round(r.left)}..${Math.round(r.right)} of ${width}`);
    }
  }
  // Controls: no two overlap (one inside the other is fine: a button in a summary, an input in its label).
  const selector = "a[href], button, input:not([type=hidden]), select, textarea, summary";
  const controls = [...document.querySelectorAll(selector)]
    .filter((el) => shown(el) && !el.closest(offScreen));
  for (let i = 0; i < controls.length; i++) {
    for (let j = i + 1; j < controls.length; j++) {
      const a = controls[i], b = controls[j];
      if (a.contains(b) || b.contains(a)) continue;
      const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
      const x = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const y = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (x > 1 && y > 1) problems.push(`${name(a)} overlaps ${name(b)} by ${Math.round(x)}×${Math.round(y)}`);
    }
  }
  return problems;
}
"""

PAGES = ["/", "thread", "/settings/", "/inbox", "/schedules/", "/hooks/", "/shares/"]


def layout_problems(page) -> list[str]:
    return page.evaluate(LAYOUT_PROBLEMS, OFF_SCREEN_BY_DESIGN)


def check_layout(
    browser, base_url: str, locale: str, viewport: dict, username: str, *, shot: str | None = None
) -> dict[str, list[str]]:
    """The layout problems of every page in PAGES; with `shot`, the chat (a finished turn) is also that screenshot."""
    context = browser.new_context(locale=locale, viewport=viewport, has_touch=viewport is PHONE)
    page = context.new_page()
    page.goto(f"{base_url}/")
    found = {"login": layout_problems(page)}
    sign_in(page, base_url, username, USERS[username])
    if not page.locator("#thread-list .thread-item").count():
        ask_for_a_sum(page)
    thread_url = page.locator("#thread-list .thread-link").first.get_attribute("href")
    for path in PAGES:
        page.goto(f"{base_url}{thread_url if path == 'thread' else path}")
        if path in ("/", "thread"):
            connected(page)
        if path == "thread":
            page.wait_for_selector(".tool-card[data-status='success']")
            if shot:
                screenshot(page, shot)
        found[path] = layout_problems(page)
    context.close()
    return {where: problems for where, problems in found.items() if problems}


def report(problems: dict[str, list[str]]) -> str:
    return "\n".join(f"{where}: {problem}" for where, found in problems.items() for problem in found)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_layout_holds_in_german(app, browser, viewport):
    shot = "chat-de-phone.png" if viewport is PHONE else None
    problems = check_layout(browser, app, "de-DE", viewport, "ada", shot=shot)
    assert problems == {}, report(problems)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_layout_holds_right_to_left(rtl_app, browser, viewport):
    context = browser.new_context(locale=PSEUDO_RTL, viewport=viewport)
    page = context.new_page()
    page.goto(f"{rtl_app}/")
    assert page.evaluate("() => [document.documentElement.lang, document.documentElement.dir]") == [PSEUDO_RTL, "rtl"]
    # The header mirrors: the brand at the right edge, the account at the left.
    brand = page.locator(".brand").bounding_box()
    assert brand["x"] + brand["width"] > viewport["width"] / 2
    context.close()
    problems = check_layout(browser, rtl_app, PSEUDO_RTL, viewport, "rtl")
    assert problems == {}, report(problems)


def test_on_a_phone_right_to_left_the_drawer_comes_from_the_right_edge_and_the_swipes_mirror(rtl_app, browser):
    context = browser.new_context(locale=PSEUDO_RTL, viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    sign_in(page, rtl_app, "rtl", USERS["rtl"])
    cdp = context.new_cdp_session(page)
    # Nothing to go back to: a swipe from the left edge is the browser's own "Back" in this page.
    cdp.send("Page.resetNavigationHistory")
    sidebar, toggle = page.locator("#sidebar"), page.locator("#sidebar-toggle")
    expect(sidebar).to_be_hidden()

    touch_swipe(cdp, 4, 220)  # the left-to-right page's gesture: from the left edge, to the right
    page.wait_for_timeout(200)
    expect(sidebar).to_be_hidden()

    touch_swipe(cdp, PHONE["width"] - 4, 170)  # from the right edge, to the left
    expect(sidebar).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    box = sidebar.bounding_box()
    assert abs(box["x"] + box["width"] - PHONE["width"]) <= 1 and box["x"] > 0  # against the right edge

    touch_swipe(cdp, 300, 80)  # further to the left, inward: the drawer stays
    page.wait_for_timeout(200)
    expect(sidebar).to_be_visible()
    touch_swipe(cdp, 80, 330)  # back to the right, towards its edge: it closes
    expect(sidebar).to_be_hidden()
    expect(toggle).to_be_focused()
    context.close()
