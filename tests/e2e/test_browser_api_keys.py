"""API keys in real Chromium against the served app: made on the settings page and shown once with a working Copy
button, gone from every page after; revoked from the list; `manage.py apikeys create` in a real process prints the key
alone; a chat a program started wears the sidebar's "API" badge."""

import re
import subprocess

import pytest

from tests.support.browser import require_chromium, screenshot, sign_in, wait_until
from tests.support.processes import PYTHON, ROOT, manage, served_app

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with served_app(tmp_path_factory.mktemp("browser-keys"), {"ada": "lovelace-1815"}, AGENTWEB_LLM_API="demo") as (
        base_url,
        env,
    ):
        yield base_url, env


def test_a_key_is_made_copied_once_and_revoked_in_the_browser(served, browser):
    app, _env = served
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app)
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815", connect=False)
    page.goto(f"{app}/settings/")
    page.fill("#api-key-name", "browser script")
    page.fill("#api-key-days", "30")
    page.click("#api-key-create")
    page.wait_for_selector("#api-key-value")
    key = page.input_value("#api-key-value")
    assert key.startswith("aw-") and len(key) > 40
    page.click("#api-key-copy")
    wait_until(page, "document.getElementById('api-key-copied').textContent === 'Copied.'")
    assert page.evaluate("() => navigator.clipboard.readText()") == key
    # No screenshot of this page for the docs: a picture of a key, even a dead one, teaches copying keys around.

    page.click("text=Back to your settings")
    page.wait_for_selector("#api-key-list")
    assert key not in page.content()
    item = page.locator(".api-key-item", has_text="browser script")
    assert item.locator(".api-key-state").text_content() == "active"
    assert item.locator(".api-key-shown").inner_text() == f"{key[:11]}…"
    screenshot(page, "api-keys-settings.png", full_page=True)
    item.get_by_role("button", name="Revoke the key browser script").click()
    page.wait_for_selector(".api-key-item.is-revoked")
    revoked = page.locator(".api-key-item", has_text="browser script")
    assert revoked.locator(".api-key-state").text_content() == "revoked"
    assert key not in page.content()
    context.close()


def test_the_command_prints_the_key_alone_and_fails_without_writing(served):
    _app, env = served
    key = manage(env, "apikeys", "create", "ada", "--name", "from the shell", "--expires", "7")
    assert key.startswith("aw-") and key.count("\n") == 1 and key.strip() == key.removesuffix("\n")
    wrong = subprocess.run(
        [PYTHON, "manage.py", "apikeys", "create", "nobody", "--name", "x"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert wrong.returncode != 0 and wrong.stdout == "" and "nobody" in wrong.stderr


def test_a_chat_started_from_the_api_wears_a_badge_in_the_sidebar(served, browser):
    app, env = served
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from chat.models import Thread; "
        "Thread.objects.create(owner=User.objects.get(username='ada'), title='From a script', source='api')",
    )
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    link = page.locator(".thread-item", has_text="From a script").locator(".thread-link")
    badge = link.locator(".thread-source")
    sync_api.expect(badge).to_be_visible()
    # Seen as "API" (its other words take a pixel), read out in words: the link's name says where the chat came from.
    assert badge.text_content() == "started from the API"
    assert link.locator(".thread-source .visually-hidden").bounding_box()["width"] <= 1
    sync_api.expect(page.get_by_role("link", name=re.compile(r"From a script.*started from the API"))).to_be_visible()
    assert page.locator(".thread-item", has_text="From a script").get_attribute("data-source") == "api"
    sidebar = page.locator("#sidebar").bounding_box()
    screenshot(page, "sidebar-api-badge.png", clip={**sidebar, "height": 200})
    context.close()
