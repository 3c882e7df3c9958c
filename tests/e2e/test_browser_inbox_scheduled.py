"""A *scheduled* run waits for approval and its person approves it from /inbox on a phone, in real Chromium.

The app is served as `make run` serves it (agentweb.serve: the Daphne process fires due schedules itself, with no
tab open), with a scripted model server that asks for `send_email` (tests/support/approval_tools.py: it requires
approval) and then answers. Nobody types anything: the schedule's ticker starts the run, the run waits, the inbox
open on the phone shows the item live; a second tab opened on the thread follows the approval, the tool's result
and the answer without a reload.
"""

import json
import shutil
import time
from contextlib import ExitStack

import pytest

from tests.e2e import test_browser_approvals as approvals
from tests.e2e.test_browser_approvals import ARGS, ASK, DONE, INIT_SCRIPT, PASSWORD, USER, WAITING
from tests.support.browser import connected, sign_in
from tests.support.processes import Daphne, app_environment, manage, model_server

migrated_db = approvals.migrated_db

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=20_000)

PHONE = {"viewport": {"width": 375, "height": 740}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
ITEM = ".inbox-item[data-kind='approval']"

# Due two seconds from now, every hour: it fires once while the test runs.
MAKE_SCHEDULE = (
    "from datetime import timedelta; from django.utils import timezone; from django.contrib.auth.models import User;"
    " from agents.models import Agent; from schedules.models import Schedule;"
    " Agent.objects.create(name='Mailer', slug='mailer');"
    f" s = Schedule.objects.create(owner=User.objects.get(username={USER!r}), agent='mailer',"
    " prompt='email a@example.com the news of {date}', kind='every', every_minutes=60,"
    " next_run_at=timezone.now() + timedelta(seconds=2)); print(s.pk)"
)
STATE = (
    "import json; from schedules.models import ScheduleRun;"
    " print(json.dumps([[r.status, r.run.status if r.run else None, r.run.source if r.run else None,"
    " str(r.thread_id)] for r in ScheduleRun.objects.all()]))"
)


@pytest.fixture
def scheduled_app(migrated_db, tmp_path):
    """(base URL, environment) of the app served by agentweb.serve, ticking every second."""
    with ExitStack() as stack:
        model_url = stack.enter_context(model_server([ASK, DONE], tmp_path))
        shutil.copy(migrated_db(), tmp_path / "e2e.sqlite3")
        env = app_environment(
            tmp_path,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="m",
            AGENTWEB_TOOL_MODULES="tests.support.approval_tools",
            AGENTWEB_SCHEDULE_TICK="1",
        )
        server = Daphne(env).start()
        stack.callback(server.stop)
        yield server.url, env


@pytest.fixture
def phone(browser):
    context = browser.new_context(**PHONE)
    context.add_init_script(INIT_SCRIPT)
    yield context
    context.close()


@pytest.fixture
def desktop(browser):
    context = browser.new_context(viewport={"width": 900, "height": 760})
    yield context
    context.close()


def firings(env) -> list:
    return json.loads(manage(env, "shell", "-c", STATE).strip().splitlines()[-1])


def test_a_scheduled_run_approved_from_the_inbox_on_a_phone_finishes_and_the_threads_tab_follows(
    scheduled_app, phone, desktop
):
    url, env = scheduled_app
    inbox = phone.new_page()
    sign_in(inbox, url, USER, PASSWORD)
    inbox.goto(f"{url}/inbox")
    connected(inbox)
    expect(inbox.locator("#inbox-empty")).to_be_visible()

    manage(env, "shell", "-c", MAKE_SCHEDULE)  # nobody types: the Daphne process's ticker fires it

    # The waiting call arrives in the open inbox without a reload, marked as started by a schedule.
    item = inbox.locator(ITEM)
    expect(item).to_have_count(1)
    expect(item.locator(".inbox-tool")).to_have_text("send_email")
    expect(item.locator(".thread-source")).to_have_text("Schedule")
    assert json.loads(item.locator(".tool-args-text").text_content()) == ARGS
    expect(inbox.locator("#inbox-count")).to_contain_text("1")
    thread_path = item.locator(".inbox-thread-link").get_attribute("href")
    [[status, run_status, source, thread_id]] = firings(env)
    assert (status, run_status, source) == ("started", "waiting", "schedule")
    assert thread_path == f"/t/{thread_id}/"

    # A second tab, on the thread: the schedule's prompt, the waiting card, the mark of its origin.
    chat = desktop.new_page()
    sign_in(chat, url, USER, PASSWORD)
    chat.goto(f"{url}{thread_path}")
    connected(chat)
    expect(chat.locator("#thread-origin")).to_contain_text("Scheduled")
    expect(chat.locator(".message.user .message-text").first).to_contain_text("email a@example.com the news of 20")
    expect(chat.locator(WAITING).locator(".decide-approve")).to_be_visible()

    item.locator(".decide-approve").tap()
    expect(item.locator(".tool-decision")).to_have_text(f"Approved by {USER}")
    expect(inbox.locator("#inbox-count")).to_be_hidden()

    # The thread's tab follows live: the decision, the tool's result, the answer.
    done = chat.locator(".tool-card[data-status='success']")
    expect(done.locator(".tool-decision")).to_have_text(f"Approved by {USER}")
    expect(done.locator(".tool-result-text")).to_have_text("sent to a@example.com: hi")
    expect(chat.locator(".message.assistant .message-text").last).to_have_text("Done.")

    deadline = time.monotonic() + 20
    while (found := firings(env))[0][1] != "completed" and time.monotonic() < deadline:
        time.sleep(0.3)
    assert [row[:3] for row in found] == [["started", "completed", "schedule"]]  # one firing, finished
    assert inbox.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")
