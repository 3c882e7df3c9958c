"""The admin in real Chromium on a 1280 x 800 screen, against the app as `make run` serves it: lists whose long values
stay on one line (the whole value on hover), a help text's <placeholder> shown, the configuration file's MCP server a
read-only row, usage that cannot be deleted, costs as money, a person picked by typing their name, the usage report's
chart (and its table), and the app's dark theme.

AGENTWEB_SCREENSHOTS=1 also writes the usage report and the chats' list, light and dark, to docs/screenshots/
(docs/usage.md, docs/tools-admin.md)."""

import json
import re

import pytest

from tests.support.browser import require_chromium, screenshot, wait_until
from tests.support.processes import app_environment, daphne, manage

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

ROOT_USER, ROOT_PASSWORD = "root", "root-password-1815"
VIEWPORT = {"width": 1280, "height": 800}
LONG_TITLE = "A chat about " + "the many ways a very long title can run on and on " * 6 + "until it ends"
LONG_MODEL = "qwen3-32b-instruct-on-the-team-gpu-server-in-the-basement-rack-two"
DARK_BG = "rgb(21, 23, 27)"  # static/chat/app.css --bg, dark
LIGHT_BG = "rgb(247, 247, 248)"

SEED = f"""
import datetime
from decimal import Decimal
from django.contrib.auth.models import User
from django.utils import timezone
from chat.models import Thread, Usage
User.objects.create_superuser({ROOT_USER!r}, password={ROOT_PASSWORD!r})
ada = User.objects.create_user("ada", password="ada-password-1815", first_name="Ada", last_name="Lovelace")
grace = User.objects.create_user("grace", password="grace-password-1906", first_name="Grace", last_name="Hopper")
Thread.objects.create(owner=ada, title={LONG_TITLE!r})
for n in range(5):
    Thread.objects.create(owner=grace, title=f"Short chat {{n}}")
noon = timezone.now().replace(hour=12, minute=0)  # each call on the day it says, whatever the time of the test
qwen = {LONG_MODEL!r}
calls = [
    (0, ada, qwen, "research-assistant", 12000, 800, "0.0042"),
    (0, grace, "claude-sonnet", "", 3000, 1200, "12.3"),
    (1, ada, "claude-sonnet", "research-assistant", 8000, 500, "0.0850"),
    (3, grace, qwen, "", 20000, 2500, None),
    (5, ada, "gpt-4o-mini", "support-triage", 5000, 300, "0.00093"),
]
for n, (days_ago, user, model, agent, tokens_in, tokens_out, cost) in enumerate(calls):
    Usage.objects.create(
        user=user, model_label=model, agent=agent, input_tokens=tokens_in, output_tokens=tokens_out,
        cost=Decimal(cost) if cost else None, created_at=noon - datetime.timedelta(days=days_ago, minutes=n),
    )
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser-admin")
    config = folder / "mcp.json"
    # Disabled: listed, and never started (the command does not exist on purpose).
    servers = {"filetools": {"command": "agentweb-no-such-command", "args": ["--root", "/srv/files"], "enabled": False}}
    config.write_text(json.dumps({"mcpServers": servers}))
    env = app_environment(folder, AGENTWEB_LLM_API="demo", AGENTWEB_MCP_CONFIG=str(config))
    manage(env, "migrate", "--noinput")
    manage(env, "shell", "-c", SEED)
    with daphne(env) as base_url:
        yield base_url


@pytest.fixture
def page(app, browser):
    context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    page = context.new_page()
    page.goto(f"{app}/admin/login/?next=/admin/")
    page.fill("#id_username", ROOT_USER)
    page.fill("#id_password", ROOT_PASSWORD)
    page.click("#login-form [type=submit]")
    page.wait_for_selector("#site-name")
    yield page
    context.close()


def row_heights(page) -> tuple[list[float], float]:
    """The height of each row of the list, and what two lines of its text take (with the cells' padding)."""
    return page.evaluate(
        """() => {
          const rows = [...document.querySelectorAll('#result_list tbody tr')];
          const cell = rows[0].querySelector('td, th');
          const style = getComputedStyle(cell);
          const line = parseFloat(style.fontSize) * 1.5;
          const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
          return [rows.map(row => row.getBoundingClientRect().height), 2 * line + padding];
        }"""
    )


def fits(page) -> bool:
    """The list is no wider than the page gives it: nothing to scroll sideways."""
    return page.evaluate(
        "() => { const box = document.querySelector('#changelist-form .results');"
        " return box.scrollWidth <= box.clientWidth + 1 && document.documentElement.scrollWidth <= innerWidth; }"
    )


def test_a_list_of_long_values_keeps_each_row_on_one_line_with_the_whole_value_on_hover(app, page):
    page.goto(f"{app}/admin/chat/thread/")
    heights, two_lines = row_heights(page)
    assert len(heights) == 6 and max(heights) <= two_lines
    cell = page.locator("#result_list .agentweb-cut", has_text="A chat about")
    assert cell.get_attribute("title") == LONG_TITLE
    assert cell.evaluate("node => node.scrollWidth > node.clientWidth")  # cut, with its ellipsis
    assert fits(page)
    screenshot(page, "admin-threads.png")


def test_the_usage_list_fits_the_screen_one_line_a_call_and_its_costs_are_money(app, page):
    page.goto(f"{app}/admin/chat/usage/")
    heights, two_lines = row_heights(page)
    assert len(heights) == 5 and max(heights) <= two_lines
    assert fits(page)
    costs = page.locator("#result_list td.field-cost_shown").all_text_contents()
    assert costs == ["$0.0042", "$12.30", "$0.085", "-", "$0.00093"]
    model = page.locator("#result_list td.field-model_cut .agentweb-cut").first
    assert model.get_attribute("title") == LONG_MODEL
    total = page.locator("#usage-report .usage-total td").nth(4)
    expect(total).to_have_text("$12.39")


def test_a_help_text_shows_its_placeholders(app, page):
    page.goto(f"{app}/admin/agents/agent/add/")
    help_texts = page.locator(".help").all_inner_texts()
    assert any("(MCP tools as <server>__<tool>)" in text for text in help_texts)
    assert any('"model": "<model configuration id>"' in text for text in help_texts)


def test_the_configuration_files_mcp_server_is_a_row_that_cannot_be_edited(app, page):
    page.goto(f"{app}/admin/mcpservers/mcpserver/")
    row = page.locator("#mcp-file-servers tr.mcp-file-server[data-name=filetools]")
    expect(row).to_be_visible()
    expect(row).to_contain_text("read-only")
    expect(row).to_contain_text("agentweb-no-such-command --root /srv/files")
    expect(row).to_contain_text("disabled")
    assert row.locator("a, input, select, textarea, button").count() == 0
    assert page.locator("#result_list a", has_text="filetools").count() == 0


def test_usage_offers_no_delete_and_its_delete_page_is_forbidden(app, page):
    page.goto(f"{app}/admin/chat/usage/")
    assert page.locator("select[name=action] option[value=delete_selected]").count() == 0
    assert page.locator("#result_list input.action-select").count() == 0  # no action to tick rows for
    expect(page.locator("a.addlink")).to_have_count(0)
    first = page.locator("#result_list tbody tr").first.locator("a").first
    if first.count():
        first.click()
        expect(page.locator(".deletelink")).to_have_count(0)
        expect(page.locator("input[name=_save]")).to_have_count(0)
    assert page.request.get(f"{app}/admin/chat/usage/1/delete/").status == 403


def test_a_person_is_picked_by_typing_their_name(app, page):
    page.goto(f"{app}/admin/chat/tokenbudget/add/")
    assert page.locator("input.vForeignKeyRawIdAdminField").count() == 0
    page.click(".field-user .select2-selection")
    page.fill(".select2-search__field", "Lovel")
    option = page.locator(".select2-results__option", has_text="ada")
    expect(option).to_have_count(1)
    expect(page.locator(".select2-results__option")).to_have_count(1)  # grace is not a Lovelace
    option.click()
    page.fill("#id_daily_tokens", "5000")
    page.click("input[name=_save]")
    expect(page.locator("#result_list")).to_contain_text("ada")


def test_the_usage_report_charts_each_day_by_model_or_agent_with_a_table(app, page):
    page.goto(f"{app}/admin/chat/usage/")
    by_model = page.locator("#usage-chart-model svg.usage-chart-svg")
    expect(by_model).to_be_visible()
    assert by_model.get_attribute("role") == "img"
    assert by_model.locator("rect").count() == 5  # one part per model for each day it spent
    assert re.search(r"Tokens a day from .* by model\. In all, qwen3", by_model.locator("desc").text_content())
    box = by_model.bounding_box()
    assert box["width"] > 400 and box["height"] > 100
    expect(page.locator("#usage-chart-model .usage-chart-legend li")).to_have_count(3)
    expect(page.locator("#usage-chart-agent")).to_be_hidden()

    page.click("label[for=usage-chart-by-agent]")
    expect(page.locator("#usage-chart-agent svg")).to_be_visible()
    expect(page.locator("#usage-chart-model")).to_be_hidden()
    expect(page.locator("#usage-chart-agent .usage-chart-legend")).to_contain_text("research-assistant")

    table = page.locator("#usage-chart-agent .usage-chart-table")
    table.locator("summary").click()
    expect(table.locator("tbody tr")).to_have_count(6)  # six days, the empty ones too
    page.click("label[for=usage-chart-by-model]")
    screenshot(page, "admin-usage-report.png")


def test_the_admin_is_dark_when_the_system_is_and_when_the_settings_say_so(app, browser):
    def background(page) -> str:
        return page.evaluate("() => getComputedStyle(document.body).backgroundColor")

    context = browser.new_context(viewport=VIEWPORT, color_scheme="dark")
    page = context.new_page()
    page.goto(f"{app}/admin/login/?next=/admin/chat/usage/")
    assert background(page) == DARK_BG
    page.fill("#id_username", ROOT_USER)
    page.fill("#id_password", ROOT_PASSWORD)
    page.click("#login-form [type=submit]")
    page.wait_for_selector("#usage-report")
    assert background(page) == DARK_BG
    header = page.evaluate("() => getComputedStyle(document.querySelector('#header')).backgroundColor")
    assert header == "rgb(29, 32, 38)"  # the app's surface, dark
    screenshot(page, "admin-usage-report-dark.png")
    page.goto(f"{app}/admin/chat/thread/")
    screenshot(page, "admin-threads-dark.png")

    # The theme picked on the settings page wins over the system's, as on the app's pages.
    page.emulate_media(color_scheme="light")
    page.reload()
    assert background(page) == LIGHT_BG
    page.goto(f"{app}/settings/")
    page.check("#theme-form input[value=dark]")
    page.click("#theme-save")
    page.wait_for_load_state()
    page.goto(f"{app}/admin/")
    wait_until(page, f"getComputedStyle(document.body).backgroundColor === '{DARK_BG}'")
    assert page.locator("#admin-theme-link").get_attribute("href") == "/settings/"
    context.close()


PHONE = {"width": 390, "height": 844}
# What leaves the screen sideways, and whether the page itself scrolls sideways: a box that clips or scrolls (a wide
# table in its own scrolling container) keeps its content from counting.
SIDEWAYS = """() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  if (document.documentElement.scrollWidth > width + 1) {
    found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  }
  const clipped = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (!el.checkVisibility({ visibilityProperty: true }) || el.closest(".skip-to-content-link, .skip-link")) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1 || clipped(el)) continue;
    if (r.left < -1 || r.right > width + 1) {
      found.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${[...el.classList].join(".")}: `
        + `${Math.round(r.left)}..${Math.round(r.right)}`);
    }
  }
  return found.slice(0, 12);
}"""


def test_on_a_phone_the_admins_pages_do_not_scroll_sideways(app, browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, color_scheme="light")
    page = context.new_page()
    page.goto(f"{app}/admin/login/?next=/admin/")
    assert page.evaluate(SIDEWAYS) == []
    page.fill("#id_username", ROOT_USER)
    page.fill("#id_password", ROOT_PASSWORD)
    page.click("#login-form [type=submit]")
    page.wait_for_selector("#site-name")
    page.goto(f"{app}/admin/auth/user/")
    ada = page.locator("#result_list a", has_text="ada").get_attribute("href")
    problems = {}
    for path in [
        "/admin/",
        "/admin/auth/user/",
        ada,
        "/admin/agents/agent/",
        "/admin/agents/agent/add/",
        "/admin/chat/thread/",
        "/admin/chat/usage/",
    ]:
        page.goto(f"{app}{path}")
        page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")  # tables too
        found = page.evaluate(SIDEWAYS)
        if found:
            problems[path] = found
    screenshot(page, "admin-usage-report-phone.png", full_page=True)
    context.close()
    assert problems == {}, "\n".join(f"{path}: {line}" for path, lines in problems.items() for line in lines)
