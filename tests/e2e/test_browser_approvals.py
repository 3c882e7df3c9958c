"""Approvals, retry and continue in real Chromium, against the real app (Daphne) and a scripted model server.

Every test gets its own model server and app (the script is consumed once per model call); the database is
migrated once per module and copied. `send_email` (tests/support/approval_tools.py) requires approval.

AGENTWEB_SCREENSHOTS=1 also writes the approval card, waiting and decided, to docs/screenshots/.
"""

import json
import os
import shutil
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.support.browser import CHROMIUM, connected, sign_in
from tests.support.processes import (
    PYTHON,
    ROOT,
    app_environment,
    create_user,
    free_port,
    manage,
    model_server,
    stop,
    wait_for_port,
)

USER, PASSWORD = "grace", "hopper-1906"
ARGS = {"to": "a@example.com", "subject": "hi"}
ASK = {"tool_calls": [{"id": "call_1", "name": "send_email", "arguments": ARGS}]}
DONE = {"text": "Done."}
# A 500 the provider does not retry (whatever the configured attempts), so the run fails at once.
FAILURE = {"status": 500, "body": {"error": {"message": "boom"}}, "headers": {"x-should-retry": "false"}}
WAITING = ".tool-card[data-status='awaiting_approval']"
SCREENSHOTS = ROOT / "docs" / "screenshots"

# Records the frames the page sends, and can hold back the events it receives (except errors), for a tab that
# should not hear about a decision made elsewhere. Injected by Playwright, not part of the app.
INIT_SCRIPT = """
(() => {
  window.__sent = [];
  window.__deaf = false;
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    try { window.__sent.push(JSON.parse(data)); } catch (e) {}
    return send.call(this, data);
  };
  const add = WebSocket.prototype.addEventListener;
  WebSocket.prototype.addEventListener = function (type, listener, options) {
    if (type !== "message") return add.call(this, type, listener, options);
    return add.call(this, type, (ev) => {
      if (window.__deaf && !/"type": ?"error"/.test(String(ev.data))) return;
      listener(ev);
    }, options);
  };
})();
"""

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


def migrations_state() -> list[tuple[str, int]]:
    return sorted((str(f), f.stat().st_mtime_ns) for f in ROOT.glob("*/migrations/*.py"))


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory):
    """A migrated database with the test user, copied by every test; `fresh()` gives its path, migrated again if
    a migration was added or changed since (the tree may be edited while the module runs)."""
    tmp_path = tmp_path_factory.mktemp("approvals-db")
    env = app_environment(tmp_path)
    state = None

    def fresh() -> Path:
        nonlocal state
        if state != migrations_state():
            state = migrations_state()
            manage(env, "migrate", "--noinput")
        return tmp_path / "e2e.sqlite3"

    fresh()
    create_user(env, USER, PASSWORD)
    return fresh


class App:
    """The app in a Daphne subprocess that a test can kill (SIGKILL, as a crash) and start again on the same data."""

    def __init__(self, env, model_url):
        self.env = env
        self.model_url = model_url
        self.process = None
        self.log = open(Path(env["DATABASE_URL"].removeprefix("sqlite:///")).with_suffix(".log"), "a")  # noqa: SIM115
        self.url = self.start()

    def start(self):
        port = free_port()
        self.process = subprocess.Popen(
            [PYTHON, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "agentweb.asgi:application"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_for_port(port, self.process)
        return f"http://127.0.0.1:{port}"

    def model_requests(self):
        return httpx.get(f"{self.model_url}/_requests").json()

    def crash_and_restart(self):
        self.process.kill()
        self.process.wait()
        self.url = self.start()
        return self.url

    def close(self):
        if self.process is not None:
            stop(self.process)
        self.log.close()


@pytest.fixture
def start_app(migrated_db, tmp_path):
    """start_app(script, **env) → an App with a model server answering from `script` (each test its own)."""
    with ExitStack() as stack:

        def start(script, **extra_env):
            model_url = stack.enter_context(model_server(script, tmp_path))
            shutil.copy(migrated_db(), tmp_path / "e2e.sqlite3")
            env = app_environment(
                tmp_path,
                AGENTWEB_LLM_API="openai",
                AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
                AGENTWEB_LLM_MODEL="m",
                AGENTWEB_TOOL_MODULES="tests.support.approval_tools",
                **extra_env,
            )
            app = App(env, model_url)
            stack.callback(app.close)
            return app

        yield start


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 900, "height": 760})
    context.add_init_script(INIT_SCRIPT)
    yield context
    context.close()


def log_in(context, base_url):
    page = context.new_page()
    sign_in(page, base_url, USER, PASSWORD)
    return page


def ask(page, text="email a@example.com"):
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")


def open_waiting_chat(start_app, context, script, **env):
    page = log_in(context, start_app(script, **env).url)
    ask(page)
    card = page.locator(WAITING)
    expect(card.locator(".decide-approve")).to_be_visible()
    return page, card


def decisions_sent(page):
    return [f for f in page.evaluate("window.__sent") if f.get("type") == "tool_call.decide"]


def answer(page):
    return page.locator(".message.assistant .message-text").last


def idle(page):
    expect(page.locator("#stop")).to_be_hidden()
    expect(page.locator("#send")).to_be_enabled()


def screenshot(locator, name):
    """For the docs, with AGENTWEB_SCREENSHOTS=1."""
    if os.environ.get("AGENTWEB_SCREENSHOTS"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        locator.screenshot(path=str(SCREENSHOTS / name))


def test_a_waiting_call_shows_its_arguments_the_choices_and_holds_the_composer(start_app, context):
    page, card = open_waiting_chat(start_app, context, [ASK, DONE])
    assert card.locator(".status").text_content() == "needs approval"
    assert json.loads(card.locator(".tool-args-text").text_content()) == ARGS
    assert card.locator(".tool-args-text").text_content() == json.dumps(ARGS, indent=2)
    for hook in (".decide-approve", ".decide-edit", ".decide-reject", ".decide-respond"):
        expect(card.locator(hook)).to_be_visible()
    expect(card.locator(".approval-for-thread")).to_contain_text("Don't ask again for send_email in this chat")
    expect(page.locator(".run-state-waiting")).to_contain_text("Waiting for your decision")
    expect(page.locator("#send")).to_be_disabled()
    expect(page.locator("#stop")).to_be_visible()
    screenshot(page.locator(".message.assistant").last, "approval-waiting.png")


def test_approve_runs_the_call_and_the_answer_follows(start_app, context):
    page, card = open_waiting_chat(start_app, context, [ASK, DONE])
    card.locator(".decide-approve").click()
    done = page.locator(".tool-card[data-status='success']")
    expect(done.locator(".tool-result-text")).to_have_text("sent to a@example.com: hi")
    expect(done.locator(".tool-decision")).to_have_text(f"Approved by {USER}")
    expect(done.locator(".decide-approve")).to_have_count(0)
    expect(answer(page)).to_have_text("Done.")
    expect(page.locator(".run-state")).to_have_count(0)
    idle(page)
    sent = decisions_sent(page)
    assert len(sent) == 1
    assert sent[0]["decision"] == "approve"
    assert sent[0]["tool_call"] == done.get_attribute("data-tool-call-id")
    assert "for_thread" not in sent[0]


def test_dont_ask_again_approves_the_tool_for_the_rest_of_the_chat(start_app, context):
    again = {
        "tool_calls": [{"id": "call_2", "name": "send_email", "arguments": {"to": "b@example.com", "subject": "2"}}]
    }
    page, card = open_waiting_chat(start_app, context, [ASK, DONE, again, {"text": "Sent again."}])
    card.locator(".approval-for-thread-input").check()
    card.locator(".decide-approve").click()
    expect(answer(page)).to_have_text("Done.")
    assert decisions_sent(page)[0]["for_thread"] is True
    idle(page)
    ask(page, "and once more to b")
    expect(answer(page)).to_have_text("Sent again.")
    second = page.locator(".tool-card").nth(1)
    expect(second.locator(".tool-result-text")).to_have_text("sent to b@example.com: 2")
    expect(second.locator(".tool-decision")).to_be_hidden()
    assert len(decisions_sent(page)) == 1


def test_invalid_json_in_the_editor_is_explained_and_nothing_is_sent(start_app, context):
    page, card = open_waiting_chat(start_app, context, [ASK, DONE])
    card.locator(".decide-edit").click()
    editor = card.locator(".approval-args-input")
    expect(editor).to_be_visible()
    assert json.loads(editor.input_value()) == ARGS
    expect(card.locator(".tool-args-text")).to_be_hidden()

    editor.fill('{"to": "b@example.com", ')
    card.locator(".approval-edit-submit").click()
    expect(card.locator(".approval-edit .approval-input-error")).to_contain_text("Not valid JSON")
    editor.fill('["b@example.com"]')
    card.locator(".approval-edit-submit").click()
    expect(card.locator(".approval-edit .approval-input-error")).to_contain_text("must be a JSON object")
    assert decisions_sent(page) == []
    assert card.get_attribute("data-status") == "awaiting_approval"
    expect(card.locator(".approval-edit-submit")).to_be_enabled()


def test_an_edit_runs_with_the_new_arguments_and_shows_what_changed(start_app, context):
    page, card = open_waiting_chat(start_app, context, [ASK, DONE])
    card.locator(".decide-edit").click()
    card.locator(".approval-args-input").fill('{"to": "b@example.com", "subject": "hi"}')
    card.locator(".approval-edit-submit").click()
    done = page.locator(".tool-card[data-status='success']")
    expect(done.locator(".tool-result-text")).to_have_text("sent to b@example.com: hi")
    expect(done.locator(".tool-decision")).to_have_text(f"Edited by {USER}")
    assert json.loads(done.locator(".tool-args-text").text_content()) == {"to": "b@example.com", "subject": "hi"}
    assert json.loads(done.locator(".tool-args-original").text_content()) == ARGS
    expect(done.locator(".tool-args-changes")).to_have_text("Changed: to")
    expect(answer(page)).to_have_text("Done.")
    screenshot(page.locator(".message.assistant").first, "approval-edited.png")
    sent = decisions_sent(page)[0]
    assert sent["decision"] == "edit"
    assert sent["args"] == {"to": "b@example.com", "subject": "hi"}


def test_edited_arguments_the_tool_refuses_are_explained_in_the_card(start_app, context):
    page, card = open_waiting_chat(start_app, context, [ASK, DONE])
    card.locator(".decide-edit").click()
    card.locator(".approval-args-input").fill('{"to": 5}')
    card.locator(".approval-edit-submit").click()
    message = card.locator(".approval-message[data-kind='error']")
    expect(message).to_contain_text("'subject' is a required property")
    expect(card.locator(".approval-edit-submit")).to_be_enabled()
    assert card.get_attribute("data-status") == "awaiting_approval"
    expect(page.locator("#composer-error")).to_be_hidden()
    # Fixed, it goes through.
    card.locator(".approval-args-input").fill('{"to": "c@example.com", "subject": "ok"}')
    card.locator(".approval-edit-submit").click()
    expect(page.locator(".tool-card .tool-result-text")).to_have_text("sent to c@example.com: ok")


def test_reject_with_a_reason(start_app, context):
    page, card = open_waiting_chat(start_app, context, [ASK, {"text": "Alright, I won't."}])
    card.locator(".decide-reject").click()
    card.locator(".approval-reason-input").fill("not today <b>please</b>")
    card.locator(".approval-reject-submit").click()
    rejected = page.locator(".tool-card[data-status='rejected']")
    expect(rejected.locator(".tool-decision")).to_have_text(f"Rejected by {USER}: not today <b>please</b>")
    expect(rejected.locator(".status")).to_have_text("rejected")
    expect(rejected.locator(".tool-result-text")).to_contain_text("Their reason: not today <b>please</b>")
    expect(answer(page)).to_have_text("Alright, I won't.")
    assert page.locator(".tool-card b").count() == 0
    assert decisions_sent(page)[0]["message"] == "not today <b>please</b>"


def test_reply_instead_of_running(start_app, context):
    page, card = open_waiting_chat(start_app, context, [ASK, {"text": "I'll use the drafts."}])
    card.locator(".decide-respond").click()
    card.locator(".approval-respond-submit").click()
    expect(card.locator(".approval-respond .approval-input-error")).to_have_text("Write a reply first.")
    assert decisions_sent(page) == []
    card.locator(".approval-reply-input").fill("put it in drafts instead")
    card.locator(".approval-reply-input").press("Enter")
    replied = page.locator(".tool-card[data-status='replied']")
    expect(replied.locator(".status")).to_have_text("replied")
    expect(replied.locator(".tool-decision")).to_have_text(f"Replied by {USER}: put it in drafts instead")
    expect(replied.locator(".tool-result-text")).to_contain_text("put it in drafts instead")
    expect(answer(page)).to_have_text("I'll use the drafts.")
    assert decisions_sent(page)[0] | {"ref": None, "tool_call": None} == {
        "type": "tool_call.decide",
        "tool_call": None,
        "decision": "respond",
        "message": "put it in drafts instead",
        "ref": None,
    }


def test_a_reload_while_waiting_shows_the_choices_and_approving_works(start_app, context):
    page, card = open_waiting_chat(start_app, context, [ASK, DONE])
    page.reload()
    card = page.locator(WAITING)
    expect(card.locator(".decide-approve")).to_be_visible()
    assert card.get_attribute("open") is not None
    assert json.loads(card.locator(".tool-args-text").text_content()) == ARGS
    expect(page.locator(".run-state-waiting")).to_be_visible()
    expect(page.locator("#stop")).to_be_visible()
    card.locator(".decide-approve").click()
    expect(page.locator(".tool-card .tool-result-text")).to_have_text("sent to a@example.com: hi")
    expect(answer(page)).to_have_text("Done.")
    expect(page.locator(".run-state")).to_have_count(0)


def test_a_second_tab_sees_the_decision_and_loses_its_buttons(start_app, context):
    first, card = open_waiting_chat(start_app, context, [ASK, DONE])
    second = context.new_page()
    second.goto(first.url)
    connected(second)
    other = second.locator(WAITING)
    expect(other.locator(".decide-approve")).to_be_visible()
    card.locator(".decide-approve").click()
    expect(second.locator(".tool-card .tool-decision")).to_have_text(f"Approved by {USER}")
    expect(second.locator(".tool-card .decide-approve")).to_have_count(0)
    expect(second.locator(".tool-card .tool-result-text")).to_have_text("sent to a@example.com: hi")
    expect(answer(second)).to_have_text("Done.")


def test_a_decision_already_made_elsewhere_says_so(start_app, context):
    first, card = open_waiting_chat(start_app, context, [ASK, DONE])
    second = context.new_page()
    second.goto(first.url)
    connected(second)
    expect(second.locator(WAITING).locator(".decide-approve")).to_be_visible()
    second.evaluate("window.__deaf = true")  # it does not hear of the first tab's decision
    card.locator(".decide-approve").click()
    expect(answer(first)).to_have_text("Done.")
    second.locator(".decide-reject").click()
    second.locator(".approval-reject-submit").click()
    expect(second.locator(".approval-message")).to_have_text("Already decided (in another tab?)")
    expect(second.locator(".approval-reject-submit")).to_be_disabled()


def test_stop_while_waiting_cancels_the_call_and_offers_retry(start_app, context):
    page, _ = open_waiting_chat(start_app, context, [ASK, DONE])
    page.click("#stop")
    cancelled = page.locator(".tool-card[data-status='cancelled']")
    expect(cancelled).to_have_count(1)
    expect(cancelled.locator(".decide-approve")).to_have_count(0)
    expect(page.locator(".run-state-cancelled .run-retry")).to_be_visible()
    expect(page.locator(".run-state-waiting")).to_have_count(0)
    idle(page)


def test_retry_after_stop_while_waiting_asks_for_approval_again(start_app, context):
    page, _ = open_waiting_chat(start_app, context, [ASK, DONE])
    page.click("#stop")
    page.locator(".run-state-cancelled .run-retry").click()
    card = page.locator(WAITING)
    expect(card.locator(".decide-approve")).to_be_visible()
    expect(card.locator(".tool-result-text")).to_be_hidden()
    expect(page.locator(".run-state-waiting")).to_be_visible()
    card.locator(".decide-approve").click()
    expect(page.locator(".tool-card .tool-result-text")).to_have_text("sent to a@example.com: hi")
    expect(answer(page)).to_have_text("Done.")
    idle(page)


def test_retry_after_the_model_server_fails(start_app, context):
    page = log_in(context, start_app([FAILURE, {"text": "Second time lucky."}]).url)
    ask(page, "hello")
    notice = page.locator(".run-state-failed")
    expect(notice).to_contain_text("boom")
    idle(page)
    notice.locator(".run-retry").click()
    expect(answer(page)).to_have_text("Second time lucky.")
    expect(page.locator(".run-state")).to_have_count(0)
    idle(page)
    assert [f["type"] for f in page.evaluate("window.__sent") if f["type"].startswith("run.")] == ["run.retry"]


def test_retry_is_offered_again_after_a_reload(start_app, context):
    page = log_in(context, start_app([FAILURE, {"text": "Second time lucky."}]).url)
    ask(page, "hello")
    expect(page.locator(".run-state-failed")).to_contain_text("boom")
    page.reload()
    page.locator(".run-state-failed .run-retry").click()
    expect(answer(page)).to_have_text("Second time lucky.")


def test_continue_after_the_step_limit(start_app, context):
    calc = {"tool_calls": [{"id": "call_c", "name": "calculator", "arguments": {"expression": "2+2"}}]}
    page = log_in(context, start_app([calc, calc, {"text": "It is 4."}], AGENTWEB_MAX_STEPS="2").url)
    ask(page, "what is 2+2?")
    notice = page.locator(".run-state-max-steps")
    expect(notice).to_contain_text("Stopped after the step limit")
    # The server's step limit (AGENTWEB_MAX_STEPS), not a number of the page's own.
    expect(notice.locator(".run-continue")).to_have_text("Continue for 2 more steps")
    idle(page)
    notice.locator(".run-continue").click()
    expect(answer(page)).to_have_text("It is 4.")
    expect(page.locator(".run-state")).to_have_count(0)
    sent = [f for f in page.evaluate("window.__sent") if f["type"] == "run.continue"]
    assert len(sent) == 1 and sent[0].get("steps") in (None, 2)


def test_a_refused_retry_is_explained_next_to_the_composer(start_app, context):
    first = log_in(context, start_app([FAILURE, {"text": "Second time lucky."}]).url)
    ask(first, "hello")
    expect(first.locator(".run-state-failed .run-retry")).to_be_visible()
    second = context.new_page()
    second.goto(first.url)
    expect(second.locator(".run-state-failed .run-retry")).to_be_visible()
    second.evaluate("window.__deaf = true")  # it misses the retry made in the first tab
    first.locator(".run-retry").click()
    expect(answer(first)).to_have_text("Second time lucky.")
    idle(first)
    second.locator(".run-retry").click()
    expect(second.locator("#composer-error")).to_contain_text(
        "Only a failed, interrupted or stopped run can be retried"
    )
    expect(second.locator(".run-retry")).to_be_enabled()


def test_an_answer_cut_off_by_a_server_crash_can_be_retried(start_app, context):
    app = start_app([{"hang": True}, {"text": "Here it is after all."}])
    page = log_in(context, app.url)
    ask(page, "hello")
    page.wait_for_url("**/t/*/")
    expect(page.locator("#stop")).to_be_visible()
    deadline = time.monotonic() + 15
    while not app.model_requests():  # the model is answering (never): now the server goes down
        assert time.monotonic() < deadline, "the app never asked the model"
        time.sleep(0.05)
    path = page.url.split("/", 3)[3]
    page.goto(f"{app.crash_and_restart()}/{path}")
    notice = page.locator(".run-state-interrupted")
    expect(notice).to_have_text("The server stopped during this answer; the partial text is kept.Retry")
    notice.locator(".run-retry").click()
    expect(answer(page)).to_have_text("Here it is after all.")
    expect(page.locator(".run-state")).to_have_count(0)
