"""Groups in the browser (docs/teams.md, Groups): a model configuration and an agent kept for the research group are
in a member's model picker and agent list, and the member's message runs on them; someone outside sees neither, and
the Tools panel leaves out the group's tool."""

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

SETUP = (
    "from django.contrib.auth.models import Group, User; from agents.models import Agent; "
    "from modelconfig.models import ModelConfiguration; from tools.models import ToolSetting; "
    "from tools.services import sync_tool_settings; "
    "research = Group.objects.create(name='research'); User.objects.get(username='mia').groups.add(research); "
    "ModelConfiguration.objects.create(name='Research model', api='openai', base_url='{url}/v1', "
    "model='research-model', api_key='sk-x').groups.add(research); "
    "Agent.objects.create(slug='lab', name='Lab assistant', description='For the lab.').groups.add(research); "
    "sync_tool_settings(); ToolSetting.objects.get(name='calculator').groups.add(research)"
)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("groups")
    with model_server([{"text": "Hello from research."}], tmp_path) as model_url:
        env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
        manage(env, "migrate", "--noinput")
        create_user(env, "mia", "mia-password-1")
        create_user(env, "sam", "sam-password-1")
        manage(env, "shell", "-c", SETUP.format(url=model_url))
        with daphne(env) as base_url:
            yield {"base_url": base_url, "model_url": model_url}


def options(page) -> list[str]:
    return page.eval_on_selector("#model-picker", "s => [...s.options].map(o => o.textContent.trim())")


def tools_panel(page) -> list[str]:
    return page.evaluate("fetch('/tools/available').then(r => r.json()).then(b => b.tools.map(t => t.name))")


def test_a_member_picks_the_groups_model_and_agent_and_someone_outside_sees_neither(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        outside = browser.new_context().new_page()
        sign_in(outside, app["base_url"], "sam", "sam-password-1")
        assert not [name for name in options(outside) if "Research model" in name]
        assert outside.locator('.agent-choice[data-slug="lab"]').count() == 0
        assert "Research model" not in outside.content() and "Lab assistant" not in outside.content()
        assert "calculator" not in tools_panel(outside) and "current_time" in tools_panel(outside)

        page = browser.new_context().new_page()
        sign_in(page, app["base_url"], "mia", "mia-password-1")
        assert [name for name in options(page) if "Research model" in name]
        assert "calculator" in tools_panel(page)
        page.locator('.agent-choice[data-slug="lab"]').click()
        page.click("#model-picker-button")
        page.get_by_role("option", name="Research model").click()
        page.fill("#composer-input", "hello")
        page.keyboard.press("Enter")
        wait_until(page, "document.querySelector('.message.assistant .message-text')?.textContent.includes('research')")
        wait_until(page, "document.getElementById('agent-label').textContent === 'Lab assistant'")
        [request] = httpx.get(f"{app['model_url']}/_requests").json()
        assert request["json"]["model"] == "research-model"
        browser.close()
