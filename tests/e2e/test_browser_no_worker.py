"""The production shape (docs/deploy.md: PostgreSQL, Redis, runs handed to `manage.py runworker`) with no run worker
running, in real Chromium: a message, in a new chat and in an existing one, shows at once that its answer is awaited,
and the "no worker" failure arrives live, without a reload.
"""

import pytest

from tests.support.browser import require_chromium, sign_in
from tests.support.processes import model_server
from tests.support.production import cluster

USER, PASSWORD = "ada", "lovelace-1815"
SETUP = f"from django.contrib.auth.models import User; User.objects.create_user({USER!r}, password={PASSWORD!r})"
NO_WORKER = "No run worker took this run within 4 s"

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=20_000)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("no-worker")
    with (
        model_server([], tmp_path) as model_url,
        cluster(
            tmp_path,
            daphnes=1,
            setup=SETUP,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="m",
            AGENTWEB_RUN_HANDOVER_SECONDS="4",
        ) as running,
    ):
        running.worker.kill()  # the shape a new user met: AGENTWEB_RUN_WORKERS on, no worker started
        yield running.daphnes[0].url


def send_and_see_it_wait_then_fail(page, text: str, failures_before: int) -> None:
    page.fill("#composer-input", text)
    page.press("#composer-input", "Enter")
    expect(page.locator(".answer-starting")).to_be_visible()  # before the handover's limit is up
    expect(page.locator(".run-error")).to_contain_text(NO_WORKER)
    expect(page.locator(".run-error .run-retry")).to_be_visible()
    expect(page.locator(".answer-starting")).to_have_count(0)
    expect(page.locator(".message.user")).to_have_count(failures_before + 1)
    expect(page.locator("#send")).to_be_enabled()


def test_without_a_worker_a_new_chat_and_an_existing_one_show_the_wait_and_then_the_failure_live(app, browser):
    page = browser.new_page()
    sign_in(page, app, USER, PASSWORD)
    send_and_see_it_wait_then_fail(page, "Is anyone there?", 0)
    assert "/t/" in page.url  # the new chat has its address, and stays put
    expect(page.locator("#thread-list")).to_contain_text("Is anyone there?")
    page.reload()  # an existing chat
    expect(page.locator(".run-error")).to_contain_text(NO_WORKER)
    send_and_see_it_wait_then_fail(page, "Still nobody?", 1)
    page.close()
