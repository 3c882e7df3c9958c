"""Tools that talk back mid-call, in real Chromium against the real app (Daphne) and a scripted model server: the
progress on a card's status line, a request for input answered with the card's form (accepted; declined after a
reload), and the images of an MCP-shaped artifact shown in the card.

The tools (`download_files`, `ask_for_details`, `draw_square`) are in tests/support/tools_for_tests.py; the fixtures
are those of test_browser_tool_cards.py. AGENTWEB_SCREENSHOTS=1 also writes the form and the image to
docs/screenshots/.
"""

import json

import pytest

from tests.e2e.test_browser_tool_cards import (  # noqa: F401  (fixtures)
    XSS,
    ask,
    expect,
    finished,
    migrated_db,
    new_page,
    shoot,
    start_app,
)
from tests.support.browser import connected, wait_until

pytestmark = pytest.mark.usefixtures("migrated_db")

DOWNLOAD = [
    {"tool_calls": [{"id": "c1", "name": "download_files", "arguments": {"files": 8, "pause": 0.4}}]},
    {"text": "All downloaded."},
]
DETAILS = [
    {"tool_calls": [{"id": "c1", "name": "ask_for_details", "arguments": {"purpose": XSS}}]},
    {"text": "Thanks, noted."},
]
SQUARE = [
    {"tool_calls": [{"id": "c1", "name": "draw_square", "arguments": {"size": 64}}]},
    {"text": "Here is your square."},
]


def test_a_running_tool_shows_its_progress_on_the_status_line_until_it_completes(start_app, new_page):  # noqa: F811
    page = new_page(start_app(DOWNLOAD))
    ask(page, "download the files")
    card = page.locator(".tool-card")
    progress = card.locator(".tool-progress")
    shown = "document.querySelector('.tool-progress:not([hidden])')?.textContent || ''"
    wait_until(page, rf"/^[0-3]\/8 — Downloading$/.test({shown})")
    assert card.get_attribute("data-status") == "running"
    assert card.locator(".status").text_content() == "running…"
    # It moves on (polled: expect's own polling slows down between tries and would miss a given number).
    wait_until(page, rf"/^[4-7]\/8 — Downloading$/.test({shown})")
    expect(card).to_have_attribute("data-status", "success")
    expect(progress).to_be_hidden()
    assert progress.text_content() == ""
    finished(page)


def form_of(page):
    return page.locator(".tool-card form.input-request")


def test_a_request_for_input_is_a_form_on_the_card_and_the_answer_reaches_the_tool(start_app, new_page):  # noqa: F811
    page = new_page(start_app(DETAILS))
    ask(page, "sign me up")
    card = page.locator(".tool-card")
    form = form_of(page)
    expect(form).to_be_visible()
    expect(card).to_have_attribute("open", "")
    # The tool's text is text: its markup shows and never runs.
    expect(form.locator(".input-request-message")).to_have_text(f"Please fill in your details for {XSS}.")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#messages img").count() == 0
    expect(form.get_by_label("Your name", exact=True)).to_be_visible()
    expect(form.locator(".input-hint")).to_have_text("As it should be printed")

    # A field the form can check itself: nothing is sent until it fits.
    form.get_by_label("Your name", exact=True).fill("Ada")
    form.get_by_label("Email", exact=True).fill("not an address")
    form.get_by_role("button", name="Accept").click()
    expect(form.locator(".input-error").filter(has_text="Enter an email address.")).to_be_visible()
    assert form.get_by_label("Email", exact=True).get_attribute("aria-invalid") == "true"

    form.get_by_label("Email", exact=True).fill("ada@example.org")
    form.get_by_label("Age", exact=True).fill("36")
    form.get_by_label("Favourite colour", exact=True).select_option(label="Green")
    form.get_by_label("size", exact=True).select_option(label="Large")
    form.get_by_label("Send me the newsletter", exact=True).check()
    form.get_by_label("Born on", exact=True).fill("1815-12-10")
    shoot(page, "tool-input-form.png")
    form.get_by_role("button", name="Accept").click()

    expect(form).to_have_count(0)
    expect(card.locator(".tool-input-answered")).to_have_text("Input given by grace")
    expect(card).to_have_attribute("data-status", "success")
    finished(page)
    result = json.loads(card.locator(".tool-result-text").text_content())
    assert result == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "email": "ada@example.org",
            "age": 36,
            "colour": "g",
            "size": "l",
            "newsletter": True,
            "born": "1815-12-10",
        },
    }


def test_a_form_open_when_the_page_reloads_is_there_again_and_can_be_declined(start_app, new_page):  # noqa: F811
    url = start_app(DETAILS)
    page = new_page(url)
    ask(page, "sign me up")
    expect(form_of(page)).to_be_visible()
    other = new_page(url)  # a second tab on the same thread sees the form too, and sees it go
    other.goto(page.url)
    connected(other)
    expect(form_of(other)).to_be_visible()

    page.reload()
    connected(page)
    form = form_of(page)
    expect(form).to_be_visible()
    expect(form.locator(".input-request-message")).to_have_text(f"Please fill in your details for {XSS}.")
    form.get_by_role("button", name="Decline").click()

    for tab in (page, other):
        expect(form_of(tab)).to_have_count(0)
        expect(tab.locator(".tool-input-answered")).to_have_text("Input declined by grace")
    expect(page.locator(".tool-card")).to_have_attribute("data-status", "success")
    finished(page)
    assert json.loads(page.locator(".tool-result-text").text_content()) == {"action": "decline", "content": None}


def test_the_images_of_an_artifact_are_shown_in_the_card(start_app, new_page):  # noqa: F811
    page = new_page(start_app(SQUARE))
    ask(page, "draw me a square")
    card = page.locator(".tool-card")
    expect(card).to_have_attribute("data-status", "success")
    expect(card).to_have_attribute("open", "")  # opens by itself to show it

    def check(card):
        image = card.locator("img.tool-image")
        expect(image).to_have_count(1)
        expect(image).to_have_attribute("alt", "Image 1 from draw_square")
        assert image.get_attribute("src").startswith("blob:")
        wait_until(page, "document.querySelector('img.tool-image')?.complete")
        assert image.evaluate("(img) => [img.naturalWidth, img.naturalHeight]") == [64, 64]
        # The SVG and the block that is not base64 are left out, and said so.
        expect(card.locator(".tool-images-note")).to_have_text(
            "2 images not shown: only PNG, JPEG, GIF or WebP up to 5 MB can be."
        )
        assert json.loads(card.locator(".tool-structured-text").text_content()) == {"side": 64, "colour": "red"}

    check(card)
    finished(page)
    shoot(page, "tool-card-image.png")
    card.locator("button.tool-artifact-toggle").click()
    viewer = card.locator(".tool-artifact-text")
    expect(viewer).to_contain_text('"resource"')
    assert "characters of base64)" in viewer.text_content()  # the picture is above, not its base64

    page.reload()  # a page loaded later opens the card by itself too: the snapshot says it holds images
    connected(page)
    card = page.locator(".tool-card")
    expect(card).to_have_attribute("open", "")
    check(card)
