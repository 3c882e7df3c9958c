"""Following a streamed answer, in real Chromium against the real app: the conversation keeps its bottom in view
while the answer grows, stays still once the person scrolls up to read, and follows again once they scroll back
to the bottom."""

from tests.e2e import test_browser_markdown as md
from tests.support.browser import wait_until

# The Markdown tests' app, browser and helpers (a scripted model server, a signed-in page).
migrated_db, start_app, context = md.migrated_db, md.start_app, md.context
answer, ask, finished, log_in = md.answer, md.ask, md.finished, md.log_in

# About 14,000 characters in 3-character pieces every 3 ms: several seconds of streaming, many screens tall.
PARAGRAPHS = 110
TEXT = "\n\n".join(f"Paragraph {n}: " + " ".join(f"word{n}_{k}" for k in range(14)) for n in range(1, PARAGRAPHS + 1))

DISTANCE = (
    "(() => { const m = document.querySelector('#messages'); return m.scrollHeight - m.scrollTop - m.clientHeight; })()"
)
HEIGHT = "document.querySelector('#messages').scrollHeight"
TOP = "document.querySelector('#messages').scrollTop"
STREAMING = "document.querySelector(\".message.assistant[data-status='streaming']\") !== null"


def test_streaming_follows_the_bottom_until_the_person_scrolls_up_and_again_once_back(start_app, context):
    page = log_in(context, start_app([{"text": TEXT, "delay_ms": 3}]))
    ask(page, "a long answer")
    messages = page.locator("#messages")
    # Following: several screens in, the newest text is still in view.
    wait_until(page, f"{HEIGHT} > 3 * document.querySelector('#messages').clientHeight")
    assert page.evaluate(STREAMING)
    page.wait_for_timeout(100)
    assert page.evaluate(DISTANCE) < 60

    # The person scrolls up to read: what they look at stays put while the answer grows below it.
    box = messages.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)
    wait_until(page, f"{DISTANCE} > 300")
    page.wait_for_timeout(200)
    top, height = page.evaluate(f"[{TOP}, {HEIGHT}]")
    wait_until(page, f"{HEIGHT} > {height} + 400")
    assert page.evaluate(STREAMING), "the answer ended before the test could watch it grow"
    assert abs(page.evaluate(TOP) - top) <= 1
    assert page.evaluate(DISTANCE) > 300

    # Back at the bottom: it follows again.
    page.mouse.wheel(0, 100_000)
    wait_until(page, f"{DISTANCE} < 60")
    height = page.evaluate(HEIGHT)
    wait_until(page, f"{HEIGHT} > {height} + 400")
    page.wait_for_timeout(100)
    assert page.evaluate(DISTANCE) < 60
    finished(page)
    page.wait_for_timeout(200)
    assert page.evaluate(DISTANCE) < 60
    texts = answer(page).locator("p").all_text_contents()
    assert texts == TEXT.split("\n\n")
