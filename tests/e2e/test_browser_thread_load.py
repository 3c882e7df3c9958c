"""Opening a long thread in real Chromium: the server's HTML already shows the conversation's end (even without
JavaScript), then the live view takes over with the newest page of messages."""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, connected, sign_in, wait_until
from tests.support.processes import app_environment, daphne, manage

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")

MESSAGES = 300
SEED = f"""
from django.contrib.auth.models import User
from chat.models import Message, Thread
user = User.objects.create_user('alan', password='turing-1912')
thread = Thread.objects.create(owner=user, title='long one')
Message.objects.bulk_create([
    Message(thread=thread, order=n, role='user' if n % 2 else 'assistant',
            content=(f'question {{n}}' if n % 2 else f'answer **{{n}}** <img src=x onerror="window.__pwned=1">'))
    for n in range(1, {MESSAGES} + 1)
])
print(thread.pk)
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-thread-load")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0.01")
    manage(env, "migrate", "--noinput")
    thread_id = manage(env, "shell", "-c", SEED).strip().splitlines()[-1]
    with daphne(env) as base_url:
        yield base_url, thread_id


def log_in(browser, base_url, *, javascript=True):
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    sign_in(page, base_url, "alan", "turing-1912", connect=False)
    return context, page


def test_without_javascript_the_page_shows_the_threads_last_messages(app, browser):
    base_url, thread_id = app
    context, page = log_in(browser, base_url, javascript=False)
    try:
        page.goto(f"{base_url}/t/{thread_id}/")
        texts = page.locator("#messages .message .message-text").all_text_contents()
        assert 0 < len(texts) < MESSAGES
        assert texts[-1].strip().startswith(f"answer {MESSAGES}")
        assert page.locator("#messages .message.assistant strong").last.text_content() == str(MESSAGES)
        assert page.locator("#messages .earlier-messages").is_visible()
        assert page.locator("#messages img").count() == 0  # the model's HTML is text
    finally:
        context.close()


def test_the_live_view_takes_over_with_the_newest_page(app, browser):
    """The earlier pages come as the person scrolls up: tests/e2e/test_browser_thread_pages.py."""
    base_url, thread_id = app
    context, page = log_in(browser, base_url)
    try:
        page.goto(f"{base_url}/t/{thread_id}/")
        wait_until(page, "!document.querySelector('#messages [data-prerendered]')")
        wait_until(page, "document.querySelector('#messages .earlier-pages')")
        texts = page.locator("#messages .message .message-text").all_text_contents()
        assert 0 < len(texts) < MESSAGES
        assert texts[-1].strip().startswith(f"answer {MESSAGES}") and texts[0].startswith("question ")
        # At the bottom.
        wait_until(
            page,
            "(() => { const m = document.querySelector('#messages');"
            " return m.scrollHeight - m.scrollTop - m.clientHeight < 60; })()",
        )
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#messages img").count() == 0
        # The conversation goes on from there.
        connected(page)
        page.fill("#composer-input", "what is 23*19?")
        page.keyboard.press("Enter")
        count = len(texts)
        wait_until(page, f"document.querySelectorAll('#messages .message .message-text').length >= {count + 2}")
        wait_until(page, "document.querySelector('#stop').hidden && !document.querySelector('.typing')", 30)
        assert "437" in page.locator("#messages .message.assistant").last.text_content()
    finally:
        context.close()
