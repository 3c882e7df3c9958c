"""The usage line: what each answer cost under it, the thread's total in the top bar, how full the context is in the
composer; "≈" where the server counted nothing; the same after a reload."""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, launch, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage, model_server

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")

SCRIPT = [
    {"text": "Hello from the local server.", "usage": {"prompt_tokens": 1200, "completion_tokens": 34}},
    {"text": "x" * 400, "usage": False},  # a server that counts nothing: estimated
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("usage")
    with model_server(SCRIPT, tmp_path) as model_url:
        env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
        manage(env, "migrate", "--noinput")
        create_user(env, "ada", "ada-lovelace-1815")
        manage(
            env,
            "shell",
            "-c",
            "from decimal import Decimal; from modelconfig.models import ModelConfiguration; "
            f"ModelConfiguration.objects.create(name='Priced', api='openai', base_url='{model_url}/v1', "
            "model='priced-model', is_default=True, context_window=32768, price_input=Decimal('2.5'), "
            "price_output=Decimal('10'))",
        )
        with daphne(env) as base_url:
            yield {"base_url": base_url}


def text(page, selector):
    return page.eval_on_selector(selector, "node => node.hidden ? null : node.textContent")


def test_each_answer_shows_its_usage_the_thread_its_total_and_the_composer_the_context(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")
        page.fill("#composer-input", "hello")
        page.keyboard.press("Enter")
        wait_until(page, "document.querySelector('.message.assistant .message-usage')")
        # 1200 x 2.5 / 1e6 + 34 x 10 / 1e6 = 0.00334
        assert text(page, ".message.assistant .message-usage") == "1.2 k in · 34 out · cost 0.0033"
        title = page.get_attribute(".message.assistant .message-usage", "title")
        assert "1,200 input tokens, 34 output tokens, cost 0.003340" in title
        assert text(page, "#thread-usage") == "1.2 k tokens · 0.0033"
        assert text(page, "#context-gauge") == "1.2 k / 33 k"
        page.fill("#composer-input", "y" * 4000)  # about a thousand tokens more
        wait_until(page, "document.querySelector('#context-gauge').textContent === '2.2 k / 33 k'")

        page.fill("#composer-input", "and again")
        page.keyboard.press("Enter")
        wait_until(page, "document.querySelectorAll('.message.assistant .message-usage').length === 2")
        second = page.locator(".message.assistant .message-usage").nth(1)
        assert second.text_content().startswith("≈ ")
        assert second.get_attribute("data-estimated") == "true"
        assert "Estimated" in second.get_attribute("title")
        assert text(page, "#thread-usage").startswith("≈ ")
        lines = [n.text_content() for n in page.locator(".message.assistant .message-usage").all()]
        total = text(page, "#thread-usage")

        page.reload()
        wait_until(page, "document.querySelectorAll('.message.assistant .message-usage').length === 2")
        assert [n.text_content() for n in page.locator(".message.assistant .message-usage").all()] == lines
        assert text(page, "#thread-usage") == total
        browser.close()
