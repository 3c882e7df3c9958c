"""Picking a model in the thread header: the run goes to that model's server, and the thread remembers it."""

import os
import shutil

import httpx
import pytest

from tests.support.browser import CHROMIUM, launch, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage, model_server

SECRET = "sk-picker-secret-never-shown"

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("picker")
    with model_server([{"text": "Hello from the local server."}], tmp_path) as model_url:
        env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
        manage(env, "migrate", "--noinput")
        create_user(env, "kay", "alan-kay-1940")
        manage(
            env,
            "shell",
            "-c",
            "from modelconfig.models import ModelConfiguration; "
            f"ModelConfiguration.objects.create(name='Local server', api='openai', base_url='{model_url}/v1', "
            f"model='local-model', api_key='{SECRET}')",
        )
        with daphne(env) as base_url:
            yield {"base_url": base_url, "model_url": model_url}


def test_a_picked_model_answers_and_the_thread_remembers_it(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app["base_url"], "kay", "alan-kay-1940", connect=False)
        # The styled picker (a button and its list; the <select> behind it stays hidden).
        page.wait_for_selector("#model-picker-button")
        assert SECRET not in page.content()
        assert page.locator("#demo-banner").is_visible()

        page.click("#model-picker-button")
        page.get_by_role("option", name="Local server").click()
        assert page.locator("#model-picker-button").get_attribute("aria-expanded") == "false"
        assert "Local server" in page.locator("#model-picker-button").text_content()
        assert not page.locator("#demo-banner").is_visible()
        page.fill("#composer-input", "hello")
        page.keyboard.press("Enter")
        wait_until(
            page, "document.querySelector('.message.assistant .message-text')?.textContent.includes('local server')"
        )

        requests = httpx.get(f"{app['model_url']}/_requests").json()
        assert requests[0]["json"]["model"] == "local-model"
        page.reload()
        page.wait_for_selector(".message.assistant")
        picked = page.eval_on_selector("#model-picker", "s => s.options[s.selectedIndex].textContent")
        assert "Local server" in picked
        page.wait_for_selector("#model-picker-button")
        assert "Local server" in page.locator("#model-picker-button").text_content()
        browser.close()


def test_the_model_picker_works_from_the_keyboard(app):
    """Focus the picker, open it with ↓, move with the arrows, pick with Enter; Escape closes without a change."""
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app["base_url"], "kay", "alan-kay-1940", connect=False)
        button = page.locator("#model-picker-button")
        button.focus()
        page.keyboard.press("ArrowDown")
        listbox = page.get_by_role("listbox", name="Model")
        assert listbox.is_visible()
        assert page.evaluate("document.activeElement.getAttribute('role')") == "listbox"
        page.keyboard.press("Escape")
        assert not listbox.is_visible()
        assert page.evaluate("document.activeElement.id") == "model-picker-button"
        start = button.text_content()
        page.keyboard.press("Enter")
        page.keyboard.press("End")
        page.keyboard.press("Enter")
        assert button.text_content() != start
        assert page.evaluate("document.activeElement.id") == "model-picker-button"
        browser.close()
