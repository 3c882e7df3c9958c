"""Where a chat was started, in real Chromium against the served app: a trigger made on /hooks/ shows its secret once
with a Python example that, run as it is, starts a chat; that chat appears live in the sidebar marked "Triggered" (in
words, not colour alone) and in its header; the sidebar's origin filter shows only the chats of one origin, older
ones of that origin included."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import subprocess
import sys
import time

import httpx
import pytest

from tests.support.browser import require_chromium, screenshot, sign_in, wait_until
from tests.support.processes import manage, served_app

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
PASSWORD = "lovelace-1815"

MAKE_THREADS = """
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from chat.models import Thread
ada = User.objects.get(username='ada')
old = Thread.objects.create(owner=ada, title='A very old schedule', source='schedule')
Thread.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=400))
Thread.objects.bulk_create([Thread(owner=ada, title=f'Filler {n}') for n in range(200)])
Thread.objects.create(owner=ada, title='Typed by hand', source='chat')
Thread.objects.create(owner=ada, title='From a script', source='api')
Thread.objects.create(owner=ada, title='Every morning', source='schedule')
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with served_app(
        tmp_path_factory.mktemp("browser-origins"), {"ada": PASSWORD}, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0"
    ) as (base_url, env):
        manage(env, "shell", "-c", MAKE_THREADS)
        yield base_url, env


def deliver(base_url: str, trigger_id: str, secret: str, payload: dict) -> str:
    body = json.dumps(payload).encode()
    ts = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
    headers = {"X-Agentweb-Timestamp": ts, "X-Agentweb-Signature": f"sha256={digest}"}
    answer = httpx.post(f"{base_url}/hooks/{trigger_id}", content=body, headers=headers, timeout=30)
    assert answer.status_code == 202, answer.text
    return answer.json()["thread"]


def test_a_trigger_made_on_its_page_shows_its_secret_once_with_an_example_that_works(served, browser):
    app, _env = served
    page = browser.new_context().new_page()
    sign_in(page, app, "ada", PASSWORD, connect=False)
    page.goto(f"{app}/hooks/")
    page.fill("#id_name", "Issues")
    page.fill("#id_prompt", "Summarise the issue {issue.title}")
    page.click("text=Make the trigger")
    page.wait_for_selector("#trigger-secret")
    secret = page.input_value("#trigger-secret")
    assert secret.startswith("whsec_")
    example = page.inner_text("#trigger-example-python")
    assert secret in example and "issue" in example
    ran = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert re.fullmatch(r'\{"thread": "[0-9a-f-]{36}".*\}\s*', ran.stdout)
    page.click("text=Back to your triggers")
    page.wait_for_selector("#triggers-list")
    assert secret not in page.content()
    row = page.locator("#triggers-list tr", has_text="Issues")
    assert "ago" in row.inner_text()  # its last delivery: the example's
    row.get_by_role("button", name=re.compile("Remove the trigger Issues")).click()
    page.wait_for_selector("#no-triggers")
    page.context.close()


def test_the_sidebar_marks_each_origin_and_filters_by_it(served, browser):
    app, env = served
    trigger_id, secret = manage(env, "triggers", "add", "ada", "--prompt", "Build {build.id} failed").split()
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    sign_in(page, app, "ada", PASSWORD)

    thread = deliver(app, trigger_id, secret, {"build": {"id": 42}})
    item = page.locator(f'.thread-item[data-thread-id="{thread}"]')
    sync_api.expect(item).to_be_visible()  # live: thread.listed carries the source
    badge = item.locator(".thread-source")
    assert badge.text_content() == "started by a webhook: Triggered"
    assert badge.locator(".visually-hidden").bounding_box()["width"] <= 1  # seen as "Triggered", read in words
    assert item.get_attribute("data-source") == "trigger"
    scheduled = page.locator(".thread-item", has_text="Every morning")
    assert scheduled.locator(".thread-source").text_content() == "started by a schedule: Scheduled"
    assert (
        page.locator(".thread-item", has_text="From a script").locator(".thread-source").text_content()
        == "started from the API"
    )
    assert page.locator(".thread-item", has_text="Typed by hand").locator(".thread-source").count() == 0

    def visible_titles() -> set[str]:
        return set(
            page.evaluate(
                "() => [...document.querySelectorAll('#thread-list > .thread-item')]"
                ".filter((li) => li.offsetParent !== null).map((li) => li.querySelector('.thread-title').textContent)"
            )
        )

    page.select_option("#origin-filter", "schedule")
    # The old one was not on the page (200 newer chats): the filter brings it in.
    wait_until(
        page,
        "[...document.querySelectorAll('#thread-list .thread-title')]"
        ".some((t) => t.textContent === 'A very old schedule')",
    )
    assert visible_titles() == {"Every morning", "A very old schedule"}
    screenshot(page, "sidebar-origin-filter.png", clip={**page.locator("#sidebar").bounding_box(), "height": 260})
    page.select_option("#origin-filter", "trigger")
    wait_until(page, "!document.getElementById('thread-list').textContent.includes('A very old schedule')")
    shown = visible_titles()
    assert "Build 42 failed" in shown and not shown & {"Every morning", "Typed by hand", "From a script"}
    page.select_option("#origin-filter", "chat")
    shown = visible_titles()
    assert "Typed by hand" in shown and sum(title.startswith("Filler") for title in shown) > 150
    assert not shown & {"From a script", "Every morning", "Build 42 failed"}
    # A triggered chat arriving while only typed ones are shown stays out of sight.
    later = deliver(app, trigger_id, secret, {"build": {"id": 43}})
    page.wait_for_selector(f'.thread-item[data-thread-id="{later}"]', state="attached")
    assert "Build 43 failed" not in visible_titles()
    page.select_option("#origin-filter", "")
    assert {"Typed by hand", "From a script", "Every morning", "Build 42 failed", "Build 43 failed"} <= visible_titles()

    page.goto(f"{app}/t/{thread}/")
    origin = page.locator("#thread-origin")
    sync_api.expect(origin).to_be_visible()
    assert origin.text_content().strip() == "started by a webhook: Triggered"
    screenshot(page, "thread-header-origin.png", clip={"x": 0, "y": 0, "width": 1280, "height": 120})
    page.context.close()
