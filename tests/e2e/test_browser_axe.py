"""Accessibility, measured: axe-core (tests/support/axe.py) run in real Chromium over every page a person sees, in
light and dark, on a desktop (1280 by 800) and a phone (390 by 844). A serious or critical violation fails the test of
that page and variant, naming the rule, its impact, the element's selector and what to fix.

One app and one scripted model server for the module; the conversations the chat pages show (tool cards, an
approval, a form asking for input, two versions of an answer, a shared link) are made once, through the page, before
the first check; a streaming answer is started afresh for each variant. One browser; one signed-in and one
signed-out context per variant, made when its first page is checked.

AGENTWEB_AXE_REPORT=<file> also writes every violation of any impact there (JSON lines): the known minor ones.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from tests.attachments.files import png
from tests.support.axe import blocking, describe, record, violations
from tests.support.browser import connected, require_chromium, sign_in, wait_until
from tests.support.processes import Daphne, app_environment, manage, model_server

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)

USER, PASSWORD = "ada", "lovelace-1815"
TOOL_MODULES = "tests.support.tools_for_tests,tests.support.approval_tools"
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
VARIANTS = {
    "light-desktop": {"color_scheme": "light", **DESKTOP},
    "dark-desktop": {"color_scheme": "dark", **DESKTOP},
    "light-phone": {"color_scheme": "light", **PHONE},
    "dark-phone": {"color_scheme": "dark", **PHONE},
}

TOOLS = [
    {
        "tool_calls": [
            {"id": "c1", "name": "calculator", "arguments": {"expression": "23*19"}},
            {"id": "c2", "name": "sales_report", "arguments": {"region": "north"}},
            {"id": "c3", "name": "current_time", "arguments": {"timezone": "Asia/Tokyo"}},
        ],
    },
    {
        "text": "23 × 19 = **437**; the north sold 321 units.\n\n| month | units |\n|---|---|\n| May | 107 |\n\n"
        "```python\nprint(437)\n```"
    },
]
VERSIONS = [{"text": "2 + 3 = **5**."}, {"text": "It is five."}]
APPROVAL = [{"tool_calls": [{"id": "c1", "name": "send_email", "arguments": {"to": "a@example.com", "subject": "hi"}}]}]
INPUT = [{"tool_calls": [{"id": "c1", "name": "ask_for_details", "arguments": {"purpose": "the newsletter"}}]}]
STREAMING = {"hang": True, "text": "The answer so far, still streaming: "}

#: The rows the pages list: an agent of the person's own, a schedule of it (due tomorrow: it never fires while the
#: module runs), a webhook trigger, an API key, and a tool server each person connects to with a key.
ROWS = f"""
import datetime, json
from django.contrib.auth.models import User
from django.utils import timezone
from agents.models import Agent
from api.models import ApiKey
from hooks.models import Trigger, new_secret
from mcpconnect.models import ServerTools
from mcpservers.models import McpServer
from modelconfig.models import ModelConfiguration
from schedules.models import Schedule
ada = User.objects.create_superuser({USER!r}, password={PASSWORD!r}, first_name="Ada")
agent = Agent.objects.create(slug="brief", name="Brief", owner=ada, description="Answers in one line.",
                             system_prompt="Answer in one line.", starter_prompts=["Summarise my day"])
tomorrow = timezone.now() + datetime.timedelta(days=1)
schedule = Schedule.objects.create(owner=ada, agent="brief", prompt="The news of {{date}}", cron="0 8 * * 1-5",
                        time_zone="Europe/Paris", next_run_at=tomorrow)
Schedule.objects.create(owner=ada, agent="brief", prompt="Check the backups", kind="every", every_minutes=90,
                        paused=True, pause_reason="Paused by you", next_run_at=tomorrow)
Trigger.objects.create(owner=ada, name="Deploy finished", agent_slug="brief", prompt="Summarise {{title}}",
                       secret=new_secret())
key, _secret = ApiKey.issue(ada, "laptop script")
McpServer.objects.create(name="files", transport="http", url="http://127.0.0.1:9/mcp", per_person="header",
                         person_header="Authorization", require_approval=False)
ServerTools.objects.create(server="files", tools=[{{"name": "list", "description": "Your files.",
                                                  "inputSchema": {{"type": "object"}}}}])
# Models to pick from besides the default one: the chat's model picker shows its list.
ModelConfiguration.objects.create(name="Offline demo", api="demo")
ModelConfiguration.objects.create(name="Team GPU server", api="openai", base_url="http://127.0.0.1:9/v1", model="qwen3")
print(json.dumps({{"agent": agent.pk, "key": key.pk, "user": ada.pk, "schedule": schedule.pk}}))
"""

#: What Django's server_error view sends: templates/500.html rendered without a request or a context.
RENDER_500 = "from django.template import loader; print(loader.get_template('500.html').render(), end='')"


class Site:
    """The app, its model server (more script queued per scene) and what the scenes made."""

    def __init__(self, url: str, model_url: str, ids: dict):
        self.url, self.model_url, self.ids = url, model_url, ids
        self.threads: dict[str, str] = {}
        self.share_url = ""
        self.files = Path()
        self.server_error_page = ""  # templates/500.html as Django's server_error view renders it

    def script(self, entries: list[dict]) -> None:
        httpx.post(f"{self.model_url}/_script", json=entries).raise_for_status()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("axe")
    with model_server([], tmp_path) as model_url:
        env = app_environment(
            tmp_path,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="scripted",
            AGENTWEB_TOOL_MODULES=TOOL_MODULES,
            AGENTWEB_USER_AGENTS="1",
            AGENTWEB_LLM_SUPPORTS_IMAGES="1",  # a picture is sent with a message, and shown in its gallery
            AGENTWEB_INPUT_TIMEOUT="3600",  # the form asking for input stays open for the whole module
        )
        manage(env, "migrate", "--noinput")
        ids = json.loads(manage(env, "shell", "-c", ROWS).strip().splitlines()[-1])
        server = Daphne(env).start()
        try:
            site = Site(server.url, model_url, ids)
            site.files = tmp_path
            site.server_error_page = manage(env, "shell", "-c", RENDER_500)
            yield site
        finally:
            server.stop()


def finished(page) -> None:
    wait_until(page, "document.querySelector('#stop').hidden && !document.querySelector('.typing')")


def ask(page, site: Site, text: str) -> str:
    """Sends `text` in a new chat; returns the thread's address once the page has it."""
    page.goto(f"{site.url}/")
    connected(page)
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")
    wait_until(page, "/\\/t\\/[0-9a-f-]{36}\\/$/.test(location.pathname)")
    return page.url


@pytest.fixture(scope="module")
def browser_contexts(browser, site):
    """variant → {"in": a signed-in page, "out": a signed-out page}, made on first use."""
    made: dict[str, dict] = {}

    def get(variant: str) -> dict:
        if variant not in made:
            signed_in = browser.new_context(**VARIANTS[variant])
            page = signed_in.new_page()
            sign_in(page, site.url, USER, PASSWORD, connect=False)
            signed_out = browser.new_context(**VARIANTS[variant])
            made[variant] = {"in": page, "out": signed_out.new_page(), "contexts": (signed_in, signed_out)}
        return made[variant]

    yield get
    for pages in made.values():
        for context in pages["contexts"]:
            context.close()


@pytest.fixture(scope="module")
def scenes(site, browser_contexts):
    """The conversations the chat pages show, made once through the page (desktop, light)."""
    page = browser_contexts("light-desktop")["in"]
    site.script(TOOLS)
    site.threads["tools"] = ask(page, site, "What is 23*19, how did the north sell, and what time is it in Tokyo?")
    expect(page.locator(".tool-card[data-status='success']")).to_have_count(3)
    finished(page)
    page.click("#share-toggle")
    page.click("#share-create")
    expect(page.locator("#share-url")).to_be_visible()
    site.share_url = page.locator("#share-url").input_value()

    site.script(VERSIONS)
    site.threads["versions"] = ask(page, site, "what is 2+3?")
    finished(page)
    page.click(".turn-regenerate")
    expect(page.locator(".message.assistant .versions .version-count")).to_have_text("2 / 2")
    finished(page)

    site.script([{"text": "A red picture, and your notes."}])
    picture, notes = site.files / "red.png", site.files / "notes.txt"
    picture.write_bytes(png(40, 30))
    notes.write_text("some notes")
    page.goto(f"{site.url}/")
    connected(page)
    page.set_input_files("#attach-input", [str(picture), str(notes)])
    wait_until(page, "document.querySelectorAll('#attachment-chips .attachment-chip[data-attachment-id]').length === 2")
    page.fill("#composer-input", "what do you see?")
    page.keyboard.press("Enter")
    expect(page.locator(".message.user .attachment.is-image")).to_be_visible()
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("red picture")
    finished(page)
    site.threads["attachments"] = page.url

    site.script(APPROVAL)
    site.threads["approval"] = ask(page, site, "email a@example.com")
    expect(page.locator(".tool-card[data-status='awaiting_approval']")).to_be_visible()

    site.script(INPUT)
    site.threads["input"] = ask(page, site, "sign me up for the newsletter")
    expect(page.locator(".tool-card form.input-request")).to_be_visible()
    return site


# Each scene brings the page to what is checked: (the signed-in page or the signed-out one, how to get there).
def open_thread(name):
    def go(page, site):
        page.goto(site.threads[name])
        connected(page)
        expect(page.locator(".message.assistant").first).to_be_visible()
        if name == "tools":  # the cards' insides: arguments, result, the artifact's table
            for summary in page.locator(".tool-card > summary").all():
                summary.click()
        if name == "approval":
            expect(page.locator(".tool-card[data-status='awaiting_approval'] button").first).to_be_visible()
        if name == "input":
            expect(page.locator(".tool-card form.input-request")).to_be_visible()
        if name == "versions":
            expect(page.locator(".message.assistant .versions .version-count")).to_have_text("2 / 2")

    return go


def go_to(path: str, ready: str = "body"):
    def go(page, site):
        page.goto(site.url + path.format(**site.ids))
        page.wait_for_selector(ready, state="attached")

    return go


def empty_chat(page, site):
    page.goto(f"{site.url}/")
    connected(page)


def streaming(page, site):
    site.script([STREAMING])
    ask(page, site, "tell me a long story")
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("still streaming")
    expect(page.locator("#stop")).to_be_visible()


def after_streaming(page, site):
    page.click("#stop")
    finished(page)


def tools_panel(page, site):
    page.goto(site.threads["tools"])
    connected(page)
    page.click("#tools-toggle")
    expect(page.locator("#tools-list li").first).to_be_visible()


def share_menu(page, site):
    page.goto(site.threads["tools"])
    connected(page)
    page.click("#share-toggle")
    expect(page.locator("#share-form")).to_be_visible()


def account_menu(page, site):
    page.goto(f"{site.url}/settings/")
    page.click("#account-toggle")
    expect(page.locator("#account-popover")).to_be_visible()


def api_key_created(page, site):
    page.goto(f"{site.url}/settings/")
    page.fill("#api-key-name", "a key for axe")
    page.locator("#api-key-form [type=submit]").click()
    page.wait_for_load_state()
    expect(page.locator("#api-key-copied")).to_be_attached()


def attachment_viewer(page, site):
    open_thread("attachments")(page, site)
    page.locator(".message.user .attachment.is-image .attachment-link").click()
    expect(page.get_by_role("dialog", name="red.png")).to_be_visible()


def sidebar_drawer(page, site):
    page.goto(site.threads["tools"])
    connected(page)
    page.click("#sidebar-toggle")
    expect(page.locator("#sidebar .thread-link").first).to_be_visible()


def delete_dialog(page, site):
    page.goto(site.threads["tools"])
    connected(page)
    page.locator(".thread-item").first.hover()
    page.locator(".thread-item .thread-delete").first.click()
    expect(page.locator("dialog[open]")).to_be_visible()


def model_picker(page, site):
    empty_chat(page, site)
    page.click("#model-picker-button")
    listbox = page.get_by_role("listbox", name="Model")
    expect(listbox).to_be_visible()
    expect(listbox.get_by_role("option")).to_have_count(3)  # the default model and the two configured ones


def server_error(page, site):
    """The app's own 500 page: no address of the app fails on purpose, so the page Django's server_error view would
    send (rendered by the app, RENDER_500) is served in place of one, its styles and scripts from the app."""
    url = f"{site.url}/an-address-that-fails/"
    page.route(
        url,
        lambda route: route.fulfill(status=500, content_type="text/html; charset=utf-8", body=site.server_error_page),
    )
    try:
        page.goto(url)
        expect(page.locator("h1")).to_have_text("Something went wrong")
    finally:
        page.unroute(url)


def share_page(page, site):
    page.goto(site.share_url)
    expect(page.locator(".message.assistant").first).to_be_visible()


SCENES = {
    "login": ("out", go_to("/accounts/login/", "#login-form")),
    "chat-empty": ("in", empty_chat),
    "chat-streaming": ("in", streaming),
    "chat-tool-cards": ("in", open_thread("tools")),
    "chat-approval": ("in", open_thread("approval")),
    "chat-input-form": ("in", open_thread("input")),
    "chat-versions": ("in", open_thread("versions")),
    "chat-attachments": ("in", open_thread("attachments")),
    "chat-attachment-viewer": ("in", attachment_viewer),
    "chat-tools-panel": ("in", tools_panel),
    "chat-share-menu": ("in", share_menu),
    "chat-sidebar-drawer": ("in", sidebar_drawer),
    "chat-delete-dialog": ("in", delete_dialog),
    "chat-model-picker": ("in", model_picker),
    "account-menu": ("in", account_menu),
    "inbox": ("in", go_to("/inbox", "#main")),
    "settings": ("in", go_to("/settings/", "#api-keys")),
    "api-key-created": ("in", api_key_created),
    "api-key-revoke": ("in", go_to("/settings/api-keys/{key}/revoke/", "form")),
    "shared-links": ("in", go_to("/shares/", "#main")),
    "agents": ("in", go_to("/agents/", "#main")),
    "schedules": ("in", go_to("/schedules/", "#main")),
    "schedule-edit": ("in", go_to("/schedules/{schedule}/", "form")),
    "schedule-history": ("in", go_to("/schedules/{schedule}/history", "#main")),
    "agent-edit": ("in", go_to("/agents/brief/edit", "form")),
    "triggers": ("in", go_to("/hooks/", "#main")),
    "mcp-connections": ("in", go_to("/mcp/connections/", "#mcp-connections")),
    "password-change": ("in", go_to("/accounts/password_change/", "form")),
    "share-page": ("out", share_page),
    "error-404": ("in", go_to("/no-such-page/", ".error-page")),
    "error-404-signed-out": ("out", go_to("/no-such-page/", ".error-page")),
    "error-403": ("in", go_to("/admin/chat/usage/1/delete/", ".error-page")),  # usage is never deleted
    "error-500": ("out", server_error),
    "admin-index": ("in", go_to("/admin/", "#content")),
    "admin-changelist": ("in", go_to("/admin/chat/thread/", "#changelist")),
    "admin-change-form": ("in", go_to("/admin/agents/agent/{agent}/change/", "#agent_form")),
    "admin-usage": ("in", go_to("/admin/chat/usage/", "#changelist")),
}
AFTER = {"chat-streaming": after_streaming}
#: Scenes that exist on one kind of screen only: the drawer is the phone's sidebar; on a phone the chats' Delete sits
#: in that drawer, reached through it.
ONLY = {"chat-sidebar-drawer": "phone", "chat-delete-dialog": "desktop"}
CASES = [
    pytest.param(scene, variant, id=f"{scene}@{variant}")
    for scene in SCENES
    for variant in VARIANTS
    if variant.endswith(ONLY.get(scene, ""))
]


@pytest.mark.parametrize(("scene", "variant"), CASES)
def test_no_serious_or_critical_violations(scene, variant, scenes, browser_contexts):
    who, go = SCENES[scene]
    page = browser_contexts(variant)[who]
    go(page, scenes)
    try:
        found = violations(page)
    finally:
        if scene in AFTER:
            AFTER[scene](page, scenes)
    where = f"{scene} ({variant}, {re.sub(r'^https?://[^/]+', '', page.url)})"
    record(where, found)
    failing = blocking(found)
    assert not failing, describe(where, failing)
