"""Tool cards in real Chromium, against the real app (Daphne) and a scripted model server: parallel calls side by
side, the artifact viewer, the Tools panel, the keyboard, and markup in tool results, tool descriptions and thread
titles that is shown as text and never runs.

Every test gets its own model server and app (the script is consumed once per model call); the database is
migrated once per module and copied. The test tools (`sales_report` with an artifact, `echo`) are in
tests/support/tools_for_tests.py.

AGENTWEB_SCREENSHOTS=1 also writes the screenshots of docs/ui.md to docs/screenshots/.
"""

import json
import os
import shutil
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, connected, sign_in, wait_until
from tests.support.processes import ROOT, Daphne, app_environment, create_user, manage, model_server

USER, PASSWORD = "grace", "hopper-1906"
TOOL_MODULES = "tests.support.tools_for_tests"
XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
SCREENSHOTS = ROOT / "docs" / "screenshots" if os.environ.get("AGENTWEB_SCREENSHOTS") else None
WIDE = {"width": 1280, "height": 820}
PHONE = {"width": 390, "height": 844}

PARALLEL = [
    {
        "text": "",
        "tool_calls": [
            {"id": "c1", "name": "calculator", "arguments": {"expression": "23*19"}},
            {"id": "c2", "name": "calculator", "arguments": {"expression": "2**10"}},
            {"id": "c3", "name": "current_time", "arguments": {"timezone": "Asia/Tokyo"}},
        ],
    },
    {"text": "23 × 19 = **437** and 2¹⁰ = **1024**; the time in Tokyo is in the third card."},
]
REPORT = [
    {"tool_calls": [{"id": "c1", "name": "sales_report", "arguments": {"region": "north"}}]},
    {"text": "The north sold 321 units over three months; the monthly rows are in the report's artifact."},
]
ECHO = [
    {"tool_calls": [{"id": "c1", "name": "echo", "arguments": {"text": XSS}}]},
    {"text": "I repeated it."},
]
BROKEN_ARGS = '{"expression": "1+'
UNREADABLE = [
    {"tool_calls": [{"id": "c1", "name": "calculator", "arguments": BROKEN_ARGS}]},
    {"text": "My call was broken, sorry."},
]

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory):
    """A migrated database (with rows for the test tools) and the test user; each test copies it."""
    tmp_path = tmp_path_factory.mktemp("tool-cards-db")
    env = app_environment(tmp_path, AGENTWEB_TOOL_MODULES=TOOL_MODULES)
    manage(env, "migrate", "--noinput")
    create_user(env, USER, PASSWORD)
    return tmp_path / "e2e.sqlite3"


@pytest.fixture
def start_app(migrated_db, tmp_path):
    """start_app(script, setup=None) → the app's URL, with a model server answering from `script`; `setup` is
    Python run with `manage.py shell -c` on the test's database first (the admin's changes)."""
    with ExitStack() as stack:

        def start(script, setup=None):
            model_url = stack.enter_context(model_server(script, tmp_path))
            shutil.copy(migrated_db, tmp_path / "e2e.sqlite3")
            env = app_environment(
                tmp_path,
                AGENTWEB_LLM_API="openai",
                AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
                AGENTWEB_LLM_MODEL="m",
                AGENTWEB_TOOL_MODULES=TOOL_MODULES,
            )
            if setup:
                manage(env, "shell", "-c", setup)
            server = Daphne(env).start()
            stack.callback(server.stop)
            return server.url

        yield start


@pytest.fixture
def new_page(browser):
    """new_page(base_url, **context options) → a logged-in chat page whose socket is open."""
    contexts = []

    def make(base_url, **options):
        context = browser.new_context(**{"viewport": WIDE, **options})
        contexts.append(context)
        page = context.new_page()
        sign_in(page, base_url, USER, PASSWORD)
        return page

    yield make
    for context in contexts:
        context.close()


def ask(page, text):
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")


def finished(page):
    wait_until(page, "document.querySelector('#stop').hidden && !document.querySelector('.typing')")
    expect(page.locator(".message.assistant .message-text").last).to_be_visible()


def boxes(page, selector):
    return [page.locator(selector).nth(i).bounding_box() for i in range(page.locator(selector).count())]


def shoot(page, name, **options):
    if SCREENSHOTS is not None:
        page.screenshot(path=str(Path(SCREENSHOTS) / name), **options)


def focused(page) -> dict:
    """What has the keyboard focus, and whether it shows it."""
    return page.evaluate(
        """() => {
        const node = document.activeElement;
        return {
            id: node.id, tag: node.tagName, cls: node.className,
            visible: node.matches(':focus-visible') && getComputedStyle(node).outlineStyle !== 'none',
        };
    }"""
    )


def test_parallel_calls_sit_side_by_side_on_a_wide_screen_and_stack_on_a_phone(start_app, new_page, browser):
    url = start_app(PARALLEL)
    page = new_page(url)
    ask(page, "What are 23*19 and 2**10, and what time is it in Tokyo?")
    cards = page.locator(".tool-card")
    expect(cards).to_have_count(3)
    for i in range(3):
        expect(cards.nth(i)).to_have_attribute("data-status", "success")
    finished(page)
    assert all(cards.nth(i).get_attribute("open") is None for i in range(3))  # collapsed by default

    wide = boxes(page, ".tool-card")
    assert max(b["y"] for b in wide) - min(b["y"] for b in wide) < 2  # one row
    assert wide[0]["x"] < wide[1]["x"] < wide[2]["x"]
    assert all(b["width"] < 400 for b in wide)
    shoot(page, "parallel-calls.png")

    # The keyboard: focus shows, Enter opens a card (which then takes the whole row), Space closes it.
    cards.nth(1).locator("summary").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")
    assert focused(page)["tag"] == "SUMMARY"
    assert focused(page)["visible"]
    page.keyboard.press("Enter")
    expect(cards.nth(1)).to_have_attribute("open", "")
    assert cards.nth(1).locator(".tool-result-text").text_content() == "1024"
    assert '"expression": "2**10"' in cards.nth(1).locator(".tool-args-text").text_content()
    opened = cards.nth(1).bounding_box()
    assert opened["width"] > 2.5 * wide[1]["width"]
    page.keyboard.press(" ")
    expect(cards.nth(1)).not_to_have_attribute("open", "")

    page.set_viewport_size(PHONE)
    wait_until(page, "document.querySelector('.tool-card').getBoundingClientRect().width > 300")
    phone = boxes(page, ".tool-card")
    assert phone[0]["y"] < phone[1]["y"] < phone[2]["y"]  # one column
    assert max(b["x"] for b in phone) - min(b["x"] for b in phone) < 2
    assert all(b["x"] + b["width"] <= PHONE["width"] for b in phone)

    if SCREENSHOTS is not None:
        cards.nth(0).locator("summary").click()
        page.locator(".tool-card").first.scroll_into_view_if_needed()
        shoot(page, "phone.png")

    # Dark mode follows the system's setting.
    dark = new_page(url, color_scheme="dark")
    dark.goto(page.url)
    connected(dark)
    expect(dark.locator(".tool-card")).to_have_count(3)
    background = dark.evaluate("getComputedStyle(document.body).backgroundColor")
    assert sum(int(n) for n in background[background.index("(") + 1 : -1].split(",")[:3]) < 150, background
    if SCREENSHOTS is not None:
        dark.locator(".tool-card").nth(0).locator("summary").click()
        shoot(dark, "dark-mode.png")


def test_the_artifact_of_a_tool_can_be_opened_and_downloaded(start_app, new_page):
    page = new_page(start_app(REPORT))
    ask(page, "How did the north sell this quarter?")
    card = page.locator(".tool-card")
    expect(card).to_have_attribute("data-status", "success")
    finished(page)

    card.locator("summary").focus()
    page.keyboard.press("Enter")
    assert card.locator(".tool-result-text").text_content() == "3 months, 321 units in north."
    toggle = card.locator("button.tool-artifact-toggle")
    expect(toggle).to_have_text("Show artifact")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.focus()
    page.keyboard.press("Enter")
    viewer = card.locator(".tool-artifact-text")
    expect(viewer).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(toggle).to_have_text("Hide artifact")
    artifact = json.loads(viewer.text_content())
    assert artifact["rows"] == [
        {"month": "Jan", "units": 100},
        {"month": "Feb", "units": 107},
        {"month": "Mar", "units": 114},
    ]
    assert '\n  "region": "north",' in viewer.text_content()  # indented
    assert artifact["note"].startswith("<img src=x")  # markup in an artifact is text
    assert card.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None
    if SCREENSHOTS is not None:
        page.set_viewport_size({"width": 1280, "height": 1040})
        shoot(page, "tool-card-artifact.png")

    download_link = card.get_by_role("link", name="Download")
    assert download_link.get_attribute("href").startswith("blob:")
    with page.expect_download() as info:
        download_link.click()
    download = info.value
    assert download.suggested_filename == "sales_report-artifact.json"
    assert json.loads(Path(download.path()).read_text()) == artifact

    page.keyboard.press("Tab")  # back to the toggle: Space hides the artifact again
    toggle.focus()
    page.keyboard.press(" ")
    expect(viewer).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")

    page.reload()  # a page loaded later offers the artifact too
    card = page.locator(".tool-card")
    card.locator("summary").click()
    card.locator("button.tool-artifact-toggle").click()
    expect(card.locator(".tool-artifact-text")).to_contain_text('"region": "north"')


def test_markup_in_tool_results_descriptions_and_titles_is_text_and_never_runs(start_app, new_page):
    setup = (
        "from tools.models import ToolSetting; "
        f"ToolSetting.objects.filter(name='echo').update(description_override={XSS!r})"
    )
    page = new_page(start_app(ECHO, setup=setup))
    ask(page, f"{XSS} echo this")
    card = page.locator(".tool-card")
    expect(card).to_have_attribute("data-status", "success")
    finished(page)

    def check(page):
        card = page.locator(".tool-card")
        card.locator("summary").click()
        expect(card.locator(".tool-description")).to_have_text(XSS)
        assert card.locator(".tool-result-text").text_content() == XSS
        assert json.loads(card.locator(".tool-args-text").text_content()) == {"text": XSS}
        page.click("#tools-toggle")
        entry = page.locator(".tool-entry[data-tool-name='echo']")
        expect(entry.locator(".tool-entry-description")).to_have_text(XSS)
        page.keyboard.press("Escape")
        title = page.locator(".thread-title").first.text_content()
        assert title.startswith('<img src=x onerror="window.__pwned=1"><script>')  # cut to 60 characters
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#messages img, #tools-panel img, #thread-list img").count() == 0

    check(page)
    page.reload()  # the same from the stored thread
    page.wait_for_selector(".tool-card[data-status='success']")
    connected(page)
    check(page)


def test_a_call_whose_arguments_cannot_be_read_shows_what_the_model_wrote(start_app, new_page):
    page = new_page(start_app(UNREADABLE))
    ask(page, "add something")
    expect(page.locator(".tool-card")).to_have_attribute("data-status", "error")
    finished(page)

    def check(page):
        card = page.locator(".tool-card")
        card.locator("summary").click()
        assert card.locator(".tool-args-text").text_content() == BROKEN_ARGS  # not {}
        assert "not valid JSON" in card.locator(".tool-result-text").text_content()

    check(page)
    page.reload()  # the same from the stored thread
    page.wait_for_selector(".tool-card[data-status='error']")
    connected(page)
    check(page)


def test_the_tools_panel_lists_the_tools_and_closes_with_escape(start_app, new_page):
    setup = (
        "from tools.models import ToolSetting, ApprovalRule; "
        "ToolSetting.objects.filter(name='calculator').update(requires_approval=True); "
        "ToolSetting.objects.filter(name='fetch_url').update(enabled=False); "
        "ApprovalRule.objects.create(tool_name='echo', argument='text', match='equals', pattern='x', action='ask')"
    )
    page = new_page(start_app([], setup=setup))
    toggle = page.locator("#tools-toggle")
    panel = page.locator("#tools-panel")
    expect(panel).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")

    toggle.focus()
    page.keyboard.press("Enter")
    expect(panel).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(panel.locator(".tool-entry[data-tool-name='calculator']")).to_be_visible()
    assert panel.evaluate("(node) => node.contains(document.activeElement)")
    names = panel.locator(".tool-entry-name").all_text_contents()
    assert {"calculator", "current_time", "echo", "sales_report", "remember"} <= set(names)
    assert "fetch_url" not in names  # switched off by the admin
    approval = {
        name: panel.locator(f".tool-entry[data-tool-name='{name}'] .tool-entry-approval").text_content()
        for name in ("calculator", "echo", "current_time")
    }
    assert approval == {"calculator": "asks you first", "echo": "may ask first", "current_time": "runs without asking"}
    description = panel.locator(".tool-entry[data-tool-name='sales_report'] .tool-entry-description")
    assert description.text_content().startswith("Summarise the sales of a region")
    shoot(page, "tools-panel.png")

    page.keyboard.press("Tab")  # into the panel (the close button)
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(toggle).to_be_focused()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    assert focused(page)["visible"]

    page.keyboard.press(" ")  # Space on the button opens it again; a click elsewhere closes it
    expect(panel).to_be_visible()
    page.mouse.click(WIDE["width"] - 100, WIDE["height"] // 2)  # the conversation, beside the panel
    expect(panel).to_be_hidden()
