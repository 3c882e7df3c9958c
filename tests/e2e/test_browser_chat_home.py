"""The settings page as the person's home, in Chromium: a default agent and model chosen there start the next new
chat (the empty chat shows them at once, and the model server is asked with them); the usage chart and its table
show the day's tokens."""

import httpx
import pytest

from tests.support.browser import require_chromium, screenshot, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage, model_server

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

SCRIPT = [{"text": "Hello from the tutor.", "usage": {"prompt_tokens": 1200, "completion_tokens": 34}}]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("chat-home")
    with model_server(SCRIPT, tmp_path) as model_url:
        env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
        manage(env, "migrate", "--noinput")
        create_user(env, "ada", "ada-lovelace-1815")
        manage(
            env,
            "shell",
            "-c",
            "from agents.models import Agent; from modelconfig.models import ModelConfiguration; "
            "ModelConfiguration.objects.create(name='Offline', api='demo', model='demo', is_default=True); "
            f"ModelConfiguration.objects.create(name='Scripted', api='openai', base_url='{model_url}/v1', "
            "model='scripted-m'); "
            "Agent.objects.create(slug='helper', name='Helper', is_default=True); "
            "Agent.objects.create(slug='tutor', name='Maths tutor', system_prompt='You are {agent}.'); "
            "Agent.objects.create(slug='coder', name='Coder', model=ModelConfiguration.objects.get(name='Scripted'))",
        )
        with daphne(env) as base_url:
            yield {"base_url": base_url, "model_url": model_url}


def test_picking_an_agent_on_the_empty_chat_shows_it_and_its_own_model_at_once(app, browser):
    page = browser.new_page()
    sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")
    picker = page.locator(".list-picker-button")
    expect(picker).to_contain_text("Offline")  # the site's default, the demo
    page.click('.agent-choice[data-slug="coder"]')
    expect(page.locator("#agent-label")).to_have_text("Coder")
    expect(picker).to_contain_text("Scripted")
    screenshot(page, "empty-chat-agent.png")
    page.close()


def test_defaults_chosen_in_settings_start_a_new_chat_and_its_usage_shows_in_the_chart(app, browser):
    page = browser.new_page()
    sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")
    # Before: the site's default agent is pressed and named in the header, with the site's default model.
    expect(page.locator('.agent-choice[data-slug="helper"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#agent-label")).to_have_text("Helper")

    page.goto(f"{app['base_url']}/settings/")
    expect(page.locator("#usage-none")).to_be_visible()
    page.select_option("#default-agent", "tutor")
    scripted = page.eval_on_selector(
        "#default-model", "s => [...s.options].find((o) => o.textContent.includes('Scripted')).value"
    )
    page.select_option("#default-model", scripted)
    page.click("#defaults-save")
    expect(page.locator("#defaults-saved")).to_be_visible()

    page.goto(f"{app['base_url']}/")
    # The empty chat says at once what the chat will use: the person's agent, and their model.
    expect(page.locator('.agent-choice[data-slug="tutor"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#agent-label")).to_have_text("Maths tutor")
    expect(page.locator(".list-picker-button")).to_contain_text("Scripted")
    wait_until(page, "document.querySelector('#connection-state').dataset.state === 'connected'")
    page.fill("#composer-input", "hello")
    page.keyboard.press("Enter")
    expect(page.locator(".message.assistant .message-text")).to_contain_text("Hello from the tutor.")
    asked = httpx.get(f"{app['model_url']}/_requests").json()[-1]["json"]
    assert asked["model"] == "scripted-m"
    assert asked["messages"][0]["content"] == "You are Maths tutor."

    page.goto(f"{app['base_url']}/settings/")
    bars = page.locator("#usage-chart .usage-bar")
    expect(bars).to_have_count(1)
    expect(page.locator("#usage-summary")).to_contain_text("1234 tokens")
    page.click(".usage-table-details summary")
    row = page.locator("#usage-table tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("td").nth(0)).to_have_text("1200")
    expect(row.locator("td").nth(1)).to_have_text("34")
    screenshot(page, "settings-home.png", full_page=True)
    page.close()
