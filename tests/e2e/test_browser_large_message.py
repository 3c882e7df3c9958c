"""A message too large for the socket (AGENTWEB_MAX_FRAME_BYTES), sent from the real page in real Chromium."""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, connected, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")

# Under the 100,000-character limit of a message, but three bytes a character: ~300 KB, over the 256 KiB frame limit.
TOO_LARGE = "字" * 90_000


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("large-message")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo")
    manage(env, "migrate", "--noinput")
    create_user(env, "grace", "hopper-1906")
    with daphne(env) as base_url:
        yield base_url


def test_a_message_too_large_to_send_is_given_back_with_an_error(app, browser):
    page = browser.new_page()
    sign_in(page, app, "grace", "hopper-1906")

    page.fill("#composer-input", TOO_LARGE)
    page.keyboard.press("Enter")

    wait_until(page, "!document.querySelector('#composer-error').hidden")
    assert "too large" in page.locator("#composer-error").text_content()
    assert page.input_value("#composer-input") == TOO_LARGE
    assert page.locator(".message.user").count() == 0
    connected(page)  # the socket is open again, and the page can be used
    page.fill("#composer-input", "hello")
    page.keyboard.press("Enter")
    wait_until(page, "document.querySelectorAll('.message.user').length === 1")
    page.close()
