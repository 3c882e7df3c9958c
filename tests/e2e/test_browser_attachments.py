"""Attaching images in Chromium: picked with the file input and pasted into the composer, shown as chips, sent, shown
in the thread (after a reload too), and received by the model server as image_url parts; a refused file's message."""

import base64
import os
import shutil

import httpx
import pytest

from tests.attachments.files import png
from tests.support.browser import CHROMIUM, launch, screenshot, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage, model_server

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")
PNG = png(4, 3)
PNG64 = base64.b64encode(PNG).decode()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("attachments")
    script = [{"text": "A red picture."}, {"text": "Another red picture."}, {"text": "A dropped picture."}]
    with model_server(script, tmp_path) as model_url:
        env = app_environment(
            tmp_path,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="m",
            AGENTWEB_LLM_SUPPORTS_IMAGES="true",
        )
        manage(env, "migrate", "--noinput")
        create_user(env, "ada", "ada-lovelace-1815")
        with daphne(env) as base_url:
            yield {"base_url": base_url, "model_url": model_url, "tmp": tmp_path}


def image_parts(request):
    user = [m for m in request["json"]["messages"] if m["role"] == "user"][-1]
    return [p["image_url"]["url"] for p in user["content"] if p["type"] == "image_url"]


def test_attach_an_image_by_picking_and_by_pasting_and_see_it_sent(app):
    picture = app["tmp"] / "red.png"
    picture.write_bytes(PNG)
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")

        # Picked with the file input (the 📎 button opens it).
        page.set_input_files("#attach-input", str(picture))
        chip = page.locator("#attachment-chips .attachment-chip")
        wait_until(page, "document.querySelector('#attachment-chips .attachment-chip[data-attachment-id]') !== null")
        assert "red.png" in chip.text_content() and "B" in chip.locator(".chip-size").text_content()
        assert chip.locator("img.chip-thumb").count() == 1
        page.fill("#composer-input", "What is this?")
        page.keyboard.press("Enter")
        wait_until(page, "document.querySelector('.message.assistant .message-text')?.textContent.includes('red')")
        assert page.locator("#attachment-chips .attachment-chip").count() == 0
        shown = page.locator(".message.user .attachment-thumb")
        assert shown.count() == 1
        wait_until(page, "document.querySelector('.message.user .attachment-thumb').naturalWidth === 4")
        requests = httpx.get(f"{app['model_url']}/_requests").json()
        assert image_parts(requests[0]) == [f"data:image/png;base64,{PNG64}"]

        # Pasted into the composer.
        page.evaluate(
            """(b64) => {
                const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
                const data = new DataTransfer();
                data.items.add(new File([bytes], "pasted.png", {type: "image/png"}));
                const input = document.getElementById("composer-input");
                const paste = new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true});
                input.dispatchEvent(paste);
            }""",
            PNG64,
        )
        wait_until(page, "document.querySelector('#attachment-chips .attachment-chip[data-attachment-id]') !== null")
        assert "pasted.png" in page.locator("#attachment-chips").text_content()
        page.fill("#composer-input", "And this one?")
        page.keyboard.press("Enter")
        wait_until(page, "document.querySelectorAll('.message.user .attachment-thumb').length === 2")
        wait_until(
            page, "[...document.querySelectorAll('.message.assistant')].some(m => m.textContent.includes('Another'))"
        )
        requests = httpx.get(f"{app['model_url']}/_requests").json()
        assert len(requests) == 2
        # The second request carries both images: the first message's and the new one's.
        assert image_parts(requests[1]) == [f"data:image/png;base64,{PNG64}"]
        assert (
            sum(
                len(image_parts({"json": {"messages": [m]}}))
                for m in requests[1]["json"]["messages"]
                if m["role"] == "user"
            )
            == 2
        )

        # After a reload the thread shows them, and a thumbnail opens the full-size image.
        page.reload()
        wait_until(page, "document.querySelectorAll('.message.user .attachment-thumb').length === 2")
        wait_until(
            page, "[...document.querySelectorAll('.message.user .attachment-thumb')].every(i => i.naturalWidth === 4)"
        )
        href = page.locator(".message.user .attachment-link").first.get_attribute("href")
        assert href.startswith("/attachments/")

        # A refused file: the composer says why, no chip.
        bad = app["tmp"] / "page.html"
        bad.write_text("<script>alert(1)</script>")
        page.set_input_files("#attach-input", str(bad))
        wait_until(page, "!document.getElementById('composer-error').hidden")
        assert "not accepted" in page.locator("#composer-error").text_content()
        assert page.locator("#attachment-chips .attachment-chip").count() == 0
        browser.close()


def test_a_file_over_the_limit_is_refused_before_it_is_read_and_the_composer_says_so(app):
    """The server answers 413 once the upload's Content-Length passes the limit, while Chromium still sends the
    file: it reads what is still sent, and drops it, until Chromium has read the answer."""
    big = app["tmp"] / "big.txt"
    big.write_bytes(b"x" * (11 * 1024 * 1024))
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")

        page.set_input_files("#attach-input", str(big))

        wait_until(page, "!document.getElementById('composer-error').hidden")
        assert page.locator("#composer-error").text_content() == "The file is too big: a file may be at most 10.0 MB."
        assert page.locator("#attachment-chips .attachment-chip").count() == 0
        browser.close()


def test_a_file_dropped_on_the_composer_is_sent_without_any_text(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")
        page.evaluate(
            """(b64) => {
                const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
                const data = new DataTransfer();
                data.items.add(new File([bytes], "dropped.png", {type: "image/png"}));
                const composer = document.getElementById("composer");
                for (const type of ["dragenter", "dragover", "drop"]) {
                    composer.dispatchEvent(new DragEvent(type, {dataTransfer: data, bubbles: true, cancelable: true}));
                }
            }""",
            PNG64,
        )
        wait_until(page, "document.querySelector('#attachment-chips .attachment-chip[data-attachment-id]') !== null")
        assert "dropped.png" in page.locator("#attachment-chips").text_content()
        assert page.input_value("#composer-input") == ""
        page.click("#send")
        wait_until(page, "document.querySelector('.message.user .attachment-thumb') !== null")
        wait_until(
            page, "[...document.querySelectorAll('.message.assistant')].some(m => m.textContent.includes('dropped'))"
        )
        assert page.locator(".message.user .message-text").first.text_content() == ""
        assert page.locator("#thread-list").text_content().count("dropped.png") == 1  # the new chat's name
        browser.close()


CONTRAST = """(selector) => {
    const rgb = (text) => text.match(/[\\d.]+/g).slice(0, 4).map(Number);
    const background = (node) => {
        for (; node; node = node.parentElement) {
            const [r, g, b, a = 1] = rgb(getComputedStyle(node).backgroundColor);
            if (a > 0) return [r, g, b];
        }
        return [255, 255, 255];
    };
    const luminance = ([r, g, b]) => {
        const [R, G, B] = [r, g, b].map((c) => {
            c /= 255;
            return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * R + 0.7152 * G + 0.0722 * B;
    };
    return [...document.querySelectorAll(selector)].map((node) => {
        const [a, b] = [luminance(rgb(getComputedStyle(node).color)), luminance(background(node))];
        return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    });
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chips_are_readable_and_stay_on_a_phones_screen(app, scheme):
    picture = app["tmp"] / "a-rather-long-file-name-of-a-red-picture.png"
    picture.write_bytes(PNG)
    notes = app["tmp"] / "notes.txt"
    notes.write_text("hello")
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 390, "height": 844}, color_scheme=scheme)
        sign_in(page, app["base_url"], "ada", "ada-lovelace-1815")
        page.set_input_files("#attach-input", [str(picture), str(notes)])
        wait_until(
            page, "document.querySelectorAll('#attachment-chips .attachment-chip[data-attachment-id]').length === 2"
        )
        assert page.evaluate("() => document.documentElement.scrollWidth") == 390  # nothing wider than the screen
        for chip in page.locator("#attachment-chips .attachment-chip").all():
            box = chip.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert min(page.evaluate(CONTRAST, "#attachment-chips .chip-name")) >= 4.5
        assert min(page.evaluate(CONTRAST, "#attachment-chips .chip-size")) >= 3
        assert page.locator("#attachment-chips svg.chip-icon").count() == 1  # the text file's icon is drawn
        screenshot(page, f"attachment-chips-phone-{scheme}.png")
        browser.close()
