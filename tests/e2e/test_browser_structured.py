"""A structured answer's card and a thread's summary note in the page, after a load: keys and values as text (a
model's markup stays text), the JSON and the summary expandable."""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, launch, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")

SETUP = """
import json
from django.contrib.auth import get_user_model
from chat.models import Message, Thread
owner = get_user_model().objects.get(username="ada")
thread = Thread.objects.create(owner=owner, title="Weather", summary="Ada asked <b>about</b> Oslo.", summary_through=2)
answer = {"city": "<img src=x onerror=window.pwned=1>Paris", "celsius": 21, "tags": ["mild", "dry"]}
for order, role, content, structured in [
    (1, "user", "Oslo?", None),
    (2, "assistant", "Cold.", None),
    (3, "user", "Paris?", None),
    (4, "assistant", json.dumps(answer), answer),
]:
    Message.objects.create(thread=thread, order=order, role=role, content=content, structured=structured)
print(thread.pk)
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("structured")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
    manage(env, "migrate", "--noinput")
    create_user(env, "ada", "ada-lovelace-1815")
    thread = manage(env, "shell", "-c", SETUP).strip().splitlines()[-1]
    with daphne(env) as base_url:
        yield {"base_url": base_url, "thread": thread}


def test_the_card_and_the_summary_note(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")
        page.goto(f"{app['base_url']}/t/{app['thread']}/")
        wait_until(page, "document.querySelector('.structured-answer')")
        keys = [n.text_content() for n in page.locator(".structured-answer .structured-key").all()]
        assert keys == ["city", "celsius", "tags"]
        values = page.locator(".structured-answer > .structured-object > .structured-value")
        assert values.nth(0).text_content() == "<img src=x onerror=window.pwned=1>Paris"
        assert page.locator(".structured-answer img").count() == 0
        assert page.evaluate("window.pwned") is None
        assert [n.text_content() for n in page.locator(".structured-answer .structured-item").all()] == ["mild", "dry"]
        # The JSON text itself is not shown twice: the card holds it, expandable.
        assert page.eval_on_selector(".message.assistant:last-of-type .message-text", "n => n.hidden")
        assert page.locator(".structured-answer .structured-raw[open]").count() == 0

        note = page.locator(".summary-note")
        assert note.count() == 1
        assert note.locator("summary").text_content() == "Earlier messages summarised"
        assert not note.locator(".summary-note-text").is_visible()
        note.locator("summary").click()
        assert note.locator(".summary-note-text").text_content() == "Ada asked <b>about</b> Oslo."
        assert note.locator("b").count() == 0
        # Before the first message after the summarised ones.
        after = page.evaluate("document.querySelector('.summary-note').nextElementSibling.textContent")
        assert "Paris?" in after
        browser.close()
