"""Picking an agent on the empty chat: the run uses its prompt and the header shows it, after a reload too."""

import os
import shutil

import httpx
import pytest

from tests.support.browser import CHROMIUM, launch, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage, model_server

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("agents")
    with model_server([{"text": "Hello from the tutor."}], tmp_path) as model_url:
        env = app_environment(
            tmp_path, AGENTWEB_LLM_API="openai", AGENTWEB_LLM_BASE_URL=f"{model_url}/v1", AGENTWEB_LLM_MODEL="m"
        )
        manage(env, "migrate", "--noinput")
        create_user(env, "ada", "ada-lovelace-1815")
        manage(
            env,
            "shell",
            "-c",
            "from agents.models import Agent; "
            "Agent.objects.create(slug='helper', name='Helper', description='The plain one.'); "
            "Agent.objects.create(slug='tutor', name='Maths tutor', description='Sums, step by step.', "
            "system_prompt='You are {agent}, teaching {user}.', all_tools=False, tools=['calculator'])",
        )
        with daphne(env) as base_url:
            yield {"base_url": base_url, "model_url": model_url}


def test_picking_an_agent_on_the_empty_chat_and_the_header_showing_it(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")
        tutor = page.locator('.agent-choice[data-slug="tutor"]')
        assert "Sums, step by step." in tutor.text_content()
        assert not page.locator("#agent-label").is_visible()
        tutor.click()
        assert tutor.get_attribute("aria-pressed") == "true"
        page.fill("#composer-input", "what is 2+2?")
        page.keyboard.press("Enter")
        wait_until(page, "document.querySelector('.message.assistant .message-text')?.textContent.includes('tutor')")
        wait_until(page, "document.getElementById('agent-label').textContent === 'Maths tutor'")
        assert page.locator("#agent-label").is_visible()

        request = httpx.get(f"{app['model_url']}/_requests").json()[0]["json"]
        assert request["messages"][0]["content"] == "You are Maths tutor, teaching ada."
        assert [t["function"]["name"] for t in request["tools"]] == ["calculator"]

        page.reload()
        page.wait_for_selector(".message.assistant")
        assert page.locator("#agent-label").text_content() == "Maths tutor"
        assert page.locator("#thread-list .thread-item").first.get_attribute("data-agent") == "tutor"
        browser.close()
