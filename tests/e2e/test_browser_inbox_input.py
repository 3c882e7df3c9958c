"""A tool's request for input answered from the approvals inbox on a phone's viewport (real Chromium, the real app
in Daphne, a scripted model): the thread's tab, open all along, closes its form and shows the answer.
The tool (`ask_for_details`) is in tests/support/tools_for_tests.py; the fixtures are test_browser_tool_cards'."""

import json

import pytest

from tests.e2e.test_browser_tool_cards import (  # noqa: F401  (fixtures)
    ask,
    expect,
    finished,
    migrated_db,
    new_page,
    start_app,
)
from tests.support.browser import connected

pytestmark = pytest.mark.usefixtures("migrated_db")

DETAILS = [
    {"tool_calls": [{"id": "c1", "name": "ask_for_details", "arguments": {"purpose": "the newsletter"}}]},
    {"text": "Thanks, noted."},
]
PHONE = {"viewport": {"width": 375, "height": 740}, "is_mobile": True, "has_touch": True}


def test_a_request_for_input_is_answered_from_the_inbox_and_the_thread_follows(start_app, new_page):  # noqa: F811
    url = start_app(DETAILS)
    chat = new_page(url)
    ask(chat, "sign me up")
    expect(chat.locator(".tool-card form.input-request")).to_be_visible()

    inbox = new_page(url, **PHONE)
    inbox.goto(f"{url}/inbox")
    connected(inbox)
    item = inbox.locator(".inbox-item[data-kind='input']")
    expect(item.locator(".inbox-tool")).to_have_text("ask_for_details")
    expect(inbox.locator("#inbox-count")).to_contain_text("1")
    form = item.locator("form.input-request")
    expect(form.locator(".input-request-message")).to_have_text("Please fill in your details for the newsletter.")
    assert inbox.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")

    form.get_by_label("Your name", exact=True).fill("Ada")
    form.get_by_label("Email", exact=True).fill("ada@example.org")
    form.get_by_label("Age", exact=True).fill("36")
    form.get_by_label("Favourite colour", exact=True).select_option(label="Green")
    form.get_by_label("size", exact=True).select_option(label="Large")
    form.get_by_label("Send me the newsletter", exact=True).check()
    form.get_by_label("Born on", exact=True).fill("1815-12-10")
    form.get_by_role("button", name="Accept").tap()

    expect(item.locator(".tool-input-answered")).to_have_text("Input given by grace")
    expect(inbox.locator("#inbox-count")).to_be_hidden()
    card = chat.locator(".tool-card")
    expect(card.locator("form.input-request")).to_have_count(0)
    expect(card.locator(".tool-input-answered")).to_have_text("Input given by grace")
    finished(chat)
    assert json.loads(card.locator(".tool-result-text").text_content())["content"]["name"] == "Ada"
