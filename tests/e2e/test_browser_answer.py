"""One answer per turn, in real Chromium against the real app and a scripted model server: a turn's model calls (text,
tool cards, more text) read as one answer with one Copy and one usage line, live and after a reload, on a wide
screen and a phone; code blocks in it highlighted (highlight.js), their Copy giving the raw code, and markup in
them shown as text.

The module shares one app and one model server: the script is consumed one model call at a time, turn by turn,
in the order of the tests' fixtures.
"""

import os

import pytest

from tests.support.browser import require_chromium, sign_in, wait_until
from tests.support.processes import ROOT, app_environment, create_user, daphne, manage, model_server

USER, PASSWORD = "grace", "hopper-1906"
SCREENSHOTS = ROOT / "docs" / "screenshots" if os.environ.get("AGENTWEB_SCREENSHOTS") else None
WIDE = {"width": 1280, "height": 820}
PHONE = {"width": 390, "height": 844}

FIRST_TEXT = "Let me work that out."
LAST_TEXT = "23 × 19 = **437**, and the time in Tokyo is in the second card. " + "That is all there is to it. " * 3
# One turn of three model calls: text and a call, a call alone, then the answer (streamed slowly, to watch it).
TOOL_TURN = [
    {
        "text": FIRST_TEXT,
        "tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "23*19"}}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 20},
    },
    {
        "tool_calls": [{"id": "c2", "name": "current_time", "arguments": {"timezone": "Asia/Tokyo"}}],
        "usage": {"prompt_tokens": 1100, "completion_tokens": 10},
    },
    {"text": LAST_TEXT, "usage": {"prompt_tokens": 1200, "completion_tokens": 30}, "delay_ms": 40},
]
PYTHON = "def small(x):\n    # under three\n    return x < 3 and '<b>not bold</b>'"
HOSTILE = '</code></pre><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
CODE_TURN = [
    {
        "text": f"Here it is:\n\n```python\n{PYTHON}\n```\n\nAnd the markup, as text:\n\n```html\n{HOSTILE}\n```\n",
        "usage": {"prompt_tokens": 1300, "completion_tokens": 40},
    },
]

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)

# What the conversation shows, as a person would describe it: each answer's segments (message ids, text, tool
# cards), its Copy buttons and its usage lines.
SHAPE = """() => [...document.querySelectorAll('#messages > .message.assistant')].map((answer) => ({
    segments: [...answer.querySelectorAll('.answer-segment')].map((s) => ({
        id: s.dataset.messageId,
        text: s.querySelector('.message-text').hidden ? '' : s.querySelector('.message-text').textContent.trim(),
        cards: [...s.querySelectorAll('.tool-card .tool-name')].map((n) => n.textContent),
    })),
    headers: answer.querySelectorAll('.message-meta').length,
    copies: [...answer.querySelectorAll('.answer-copy')].filter((b) => !b.hidden).length,
    usage: [...answer.querySelectorAll('.message-usage')].map((n) => n.textContent),
}))"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("answer")
    with model_server(TOOL_TURN + CODE_TURN, tmp_path) as model_url:
        env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
        manage(env, "migrate", "--noinput")
        create_user(env, USER, PASSWORD)
        manage(
            env,
            "shell",
            "-c",
            "from decimal import Decimal; from modelconfig.models import ModelConfiguration; "
            f"ModelConfiguration.objects.create(name='Priced', api='openai', base_url='{model_url}/v1', "
            "model='priced-model', is_default=True, context_window=32768, price_input=Decimal('2'), "
            "price_output=Decimal('10'))",
        )
        with daphne(env) as base_url:
            yield base_url


@pytest.fixture(scope="module")
def context(browser):
    context = browser.new_context(viewport=WIDE)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    yield context
    context.close()


@pytest.fixture(scope="module")
def page(app, context):
    page = context.new_page()
    sign_in(page, app, USER, PASSWORD)
    yield page
    page.close()


def shoot(locator, name):
    if SCREENSHOTS is not None:
        locator.screenshot(path=str(SCREENSHOTS / name))


def finished(page):
    wait_until(page, "document.querySelector('#stop').hidden && !document.querySelector('.typing')")


@pytest.fixture(scope="module")
def tool_turn(page):
    """The three-call turn, sent once; what the page showed while it streamed is recorded in window.__seen."""
    page.evaluate(
        """() => {
        window.__seen = [];
        new MutationObserver(() => {
            const answers = document.querySelectorAll('#messages > .message.assistant');
            const last = answers[answers.length - 1];
            window.__seen.push({
                answers: answers.length,
                segments: last ? last.querySelectorAll('.answer-segment').length : 0,
                streaming: last ? last.dataset.status === 'streaming' : false,
            });
        }).observe(document.querySelector('#messages'), {subtree: true, childList: true, attributes: true});
    }"""
    )
    page.fill("#composer-input", "what is 23*19, and what time is it in Tokyo?")
    page.keyboard.press("Enter")
    finished(page)
    expect(page.locator(".tool-card")).to_have_count(2)
    expect(page.locator(".message.assistant .message-usage")).to_contain_text("3 calls")
    return page


@pytest.fixture(scope="module")
def code_turn(tool_turn):
    page = tool_turn
    page.fill("#composer-input", "show me some code")
    page.keyboard.press("Enter")
    finished(page)
    expect(page.locator("#messages > .message.assistant")).to_have_count(2)
    return page


def test_a_turn_with_tool_calls_and_follow_up_text_reads_as_one_answer(tool_turn):
    (answer,) = tool_turn.evaluate(SHAPE)
    assert [s["cards"] for s in answer["segments"]] == [["calculator"], ["current_time"], []]
    assert answer["segments"][0]["text"] == FIRST_TEXT
    assert answer["segments"][2]["text"].startswith("23 × 19 = 437")
    assert all(s["id"] for s in answer["segments"])  # each model call keeps its message id
    assert answer["headers"] == 1
    assert answer["copies"] == 1
    assert len(answer["usage"]) == 1


def test_the_segments_appear_live_in_the_same_answer_while_it_streams(tool_turn):
    seen = tool_turn.evaluate("window.__seen")
    assert max(s["answers"] for s in seen) == 1
    assert any(s["streaming"] and s["segments"] == 3 for s in seen)  # the last call streaming into the answer
    assert not any(s["streaming"] and s["segments"] < 3 and s["answers"] > 1 for s in seen)


def test_the_usage_line_sums_the_turns_model_calls_and_opens_on_each(tool_turn):
    # 3,300 in x 2 / 1e6 + 60 out x 10 / 1e6 = 0.0072
    line = tool_turn.locator(".message.assistant .message-usage")
    assert line.text_content().startswith("3.3 k in · 60 out · cost 0.0072 · 3 calls")
    assert "3,300 input tokens, 60 output tokens" in line.get_attribute("title")
    calls = tool_turn.locator(".message.assistant .usage-call")
    expect(calls.first).to_be_hidden()
    line.click()
    expect(calls).to_have_count(3)
    expect(calls.first).to_be_visible()
    assert [c.text_content() for c in calls.all()] == [
        "1.0 k in · 20 out · cost 0.0022",
        "1.1 k in · 10 out · cost 0.0023",
        "1.2 k in · 30 out · cost 0.0027",
    ]
    line.click()


def test_copy_copies_the_whole_turns_text(tool_turn):
    copy = tool_turn.locator(".message.assistant .answer-copy")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert tool_turn.evaluate("navigator.clipboard.readText()") == f"{FIRST_TEXT}\n\n{LAST_TEXT.strip()}"
    expect(copy).to_have_text("Copy", timeout=5000)


def test_a_reload_shows_the_same_answer(tool_turn):
    before = tool_turn.evaluate(SHAPE)
    tool_turn.reload()
    wait_until(tool_turn, "!document.querySelector('#messages [data-prerendered]')")
    expect(tool_turn.locator(".message.assistant .message-usage")).to_have_count(1)
    assert tool_turn.evaluate(SHAPE) == before
    tool_turn.locator(".message.assistant").last.hover()  # its actions show on hover (docs/ui.md)
    shoot(tool_turn.locator(".message.assistant").last, "answer-turn.png")


def test_on_a_phone_the_answer_fits_the_screen_with_its_copy_and_usage(tool_turn, context):
    phone = context.new_page()
    phone.set_viewport_size(PHONE)
    phone.goto(tool_turn.url)
    expect(phone.locator(".message.assistant .answer-copy")).to_be_visible()
    expect(phone.locator(".message.assistant .message-usage")).to_be_visible()
    answer = phone.locator(".message.assistant").bounding_box()
    assert answer["x"] >= 0 and answer["x"] + answer["width"] <= PHONE["width"]
    assert phone.evaluate("document.querySelector('#messages').scrollWidth <= innerWidth")
    cards = [phone.locator(".tool-card").nth(i).bounding_box() for i in range(2)]
    assert all(answer["x"] < c["x"] and c["x"] + c["width"] < answer["x"] + answer["width"] for c in cards)
    shoot(phone, "answer-phone.png")
    phone.close()


def test_a_code_block_with_a_language_is_highlighted_and_named(code_turn):
    block = code_turn.locator(".message.assistant").last.locator(".md-code").first
    expect(block).to_have_attribute("data-highlighted", "true")
    expect(block.locator(".md-code-lang")).to_have_text("Python")
    assert block.locator("code .hljs-keyword").first.text_content() in {"def", "return", "and"}
    assert block.locator("code .hljs-comment").text_content() == "# under three"
    assert block.locator("code").text_content() == PYTHON  # the spans add colour, not text
    shoot(code_turn.locator("#messages"), "answer-code.png")


def test_copy_on_a_highlighted_code_block_copies_the_raw_code(code_turn):
    block = code_turn.locator(".message.assistant").last.locator(".md-code").first
    expect(block).to_have_attribute("data-highlighted", "true")
    block.locator(".md-copy").click()
    expect(block.locator(".md-copy")).to_have_text("Copied")
    assert code_turn.evaluate("navigator.clipboard.readText()") == PYTHON


def test_markup_in_a_code_block_stays_text_and_never_runs(code_turn):
    block = code_turn.locator(".message.assistant").last.locator(".md-code").nth(1)
    expect(block).to_have_attribute("data-highlighted", "true")
    assert block.locator("code").text_content() == HOSTILE
    assert block.locator("code span[class^='hljs-']").count() > 0
    assert block.locator("code *:not(span)").count() == 0
    assert code_turn.evaluate("window.__pwned") is None
    assert code_turn.locator("#messages script, #messages img").count() == 0


def test_highlighting_has_its_own_colours_in_dark_mode(code_turn, browser):
    dark = browser.new_context(viewport=WIDE, color_scheme="dark", storage_state=code_turn.context.storage_state())
    page = dark.new_page()
    page.goto(code_turn.url)
    keyword = page.locator(".md-code[data-highlighted] code .hljs-keyword").first
    expect(keyword).to_be_visible()
    assert keyword.evaluate("n => getComputedStyle(n).color") == "rgb(255, 123, 114)"  # GitHub Dark's keyword
    light = code_turn.locator(".md-code[data-highlighted] code .hljs-keyword").first
    assert light.evaluate("n => getComputedStyle(n).color") == "rgb(207, 34, 46)"  # GitHub Primer's (4.5:1 on white)
    shoot(page.locator(".message.assistant").last, "answer-code-dark.png")
    dark.close()
