"""A person reloads the page while the answer streams: the answer is there again and goes on to its end."""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, connected, launch, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage, model_server

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")

ANSWER = " ".join(f"word{n}" for n in range(120))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("reload")
    # About 40 pieces a second: the reload lands in the middle of the answer.
    with model_server([{"text": ANSWER, "delay_ms": 25}], tmp_path) as model_url:
        env = app_environment(
            tmp_path, AGENTWEB_LLM_API="openai", AGENTWEB_LLM_BASE_URL=f"{model_url}/v1", AGENTWEB_LLM_MODEL="m"
        )
        manage(env, "migrate", "--noinput")
        create_user(env, "grace", "hopper-1906")
        with daphne(env) as base_url:
            yield base_url


@pytest.fixture
def page(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app, "grace", "hopper-1906")
        yield page
        browser.close()


def answer_text(page) -> str:
    # The answer is one paragraph of Markdown (the line break after its </p> is markdown-it's, as on the server).
    return (page.locator(".message.assistant .message-text").last.text_content() or "").strip()


def test_a_reload_during_the_answer_shows_it_again_and_it_goes_on_to_the_end(page):
    page.fill("#composer-input", "a long answer please")
    page.keyboard.press("Enter")
    wait_until(page, "(document.querySelector('.message.assistant .message-text')?.textContent || '').length > 20")

    page.reload()
    connected(page)
    wait_until(page, "(document.querySelector('.message.assistant .message-text')?.textContent || '').length > 0")
    seen_after_reload = answer_text(page)
    wait_until(page, "document.querySelector('.message.assistant[data-status=complete]')", timeout=60)

    assert seen_after_reload.startswith("word0 word1") and len(seen_after_reload) < len(ANSWER)
    assert answer_text(page) == ANSWER
    assert page.locator(".message.assistant").count() == 1
    assert page.locator(".message.user").count() == 1
