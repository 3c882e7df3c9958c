"""The model's thinking in real Chromium against the real app and a scripted model server: a new chat's live Thinking
box holds the whole reasoning, its first words included, as a reload shows it.

A new chat learns its thread's id from thread.created and only then asks for the thread's state; the reasoning the
run sent before that answer is in the snapshot (docs/protocol.md, `reasoning`). The page's socket is routed
through Playwright so that its thread.subscribe goes out only once the first piece of reasoning has passed: a slow
network, where the run is ahead of the page's first snapshot.
"""

import json

import pytest

from tests.support.browser import require_chromium, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage, model_server

USER, PASSWORD = "ada", "lovelace-1815"
REASONING = "First words of the thinking: the person asks for a sum. " + "Adding the numbers one by one. " * 6
ANSWER = "The sum is 42."

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("reasoning")
    script = [{"text": f"<think>{REASONING}</think>{ANSWER}", "delay_ms": 15}]
    with model_server(script, tmp_path) as model_url:
        env = app_environment(
            tmp_path, AGENTWEB_LLM_API="openai", AGENTWEB_LLM_BASE_URL=f"{model_url}/v1", AGENTWEB_LLM_MODEL="m"
        )
        manage(env, "migrate", "--noinput")
        create_user(env, USER, PASSWORD)
        with daphne(env) as base_url:
            yield base_url


def hold_subscribe_until_reasoning(page) -> dict:
    """Routes the page's socket: its thread.subscribe frames wait until the server has sent a reasoning delta."""
    held = {"frames": [], "reasoning_seen": False, "route": None}

    def route(ws):
        server = ws.connect_to_server()
        held["route"] = server

        def from_page(message):
            frame = json.loads(message) if isinstance(message, str) else {}
            if frame.get("type") == "thread.subscribe" and not held["reasoning_seen"]:
                held["frames"].append(message)
            else:
                server.send(message)

        def from_server(message):
            ws.send(message)
            if not held["reasoning_seen"] and '"message.reasoning_delta"' in str(message):
                held["reasoning_seen"] = True
                for frame in held["frames"]:
                    server.send(frame)
                held["frames"].clear()

        ws.on_message(from_page)
        server.on_message(from_server)

    page.route_web_socket("**/ws/**", route)
    return held


def test_a_new_chats_live_thinking_box_holds_the_whole_reasoning(app, browser):
    page = browser.new_page()
    held = hold_subscribe_until_reasoning(page)
    sign_in(page, app, USER, PASSWORD)
    page.fill("#composer-input", "What is the sum?")
    page.press("#composer-input", "Enter")
    expect(page.locator(".answer .message-text")).to_have_text(ANSWER)
    wait_until(page, "document.querySelector('#stop').hidden")
    assert held["reasoning_seen"]  # the snapshot was asked for after the run had sent reasoning
    expect(page.locator(".reasoning-text")).to_have_text(REASONING.strip())
    page.reload()
    expect(page.locator(".reasoning-text")).to_have_text(REASONING.strip())  # what the database holds: the same
    page.close()
