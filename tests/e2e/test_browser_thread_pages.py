"""A long conversation in real Chromium (issue 42): it opens on its newest messages, and scrolling up (or the "Load
earlier messages" button, from the keyboard) brings in every earlier page, in order, each message once, without
moving what the person is reading. Older pages show tool cards and versions as the newest do."""

import pytest

from tests.support.browser import connected, require_chromium, sign_in, wait_until
from tests.support.processes import app_environment, daphne, manage

require_chromium()
pytest.importorskip("playwright.sync_api")

MESSAGES = 600
TOOL_CALLS = MESSAGES // 100
# Parents as the app sets them (a user message's: the message before it; an answer's: its question); question 3 was
# edited once, so its earlier version is kept hidden and it shows "2 / 2".
SEED = f"""
from django.contrib.auth.models import User
from chat.models import Message, Thread, ToolCall
user = User.objects.create_user('ada', password='lovelace-1815')
thread = Thread.objects.create(owner=user, title='a year of it', has_versions=True)
last = asked = None
order = 0
for n in range(1, {MESSAGES} + 1):
    order += 1
    if n % 2:
        if n == 3:
            Message.objects.create(thread=thread, order=order, role='user', content='question 3, first try',
                                   parent=last, active=False)
        last = asked = Message.objects.create(thread=thread, order=order, role='user', content=f'question {{n}}',
                                              parent=last)
        continue
    last = Message.objects.create(thread=thread, order=order, role='assistant', content=f'answer **{{n}}**',
                                  parent=asked)
    if n % 100 == 0:
        ToolCall.objects.create(message=last, index=0, call_id=f'c{{n}}', name='calculator',
                                args={{'expression': '1+1'}}, status='success', result='2')
        order += 1
        Message.objects.create(thread=thread, order=order, role='tool', content='2', tool_call_id=f'c{{n}}',
                               name='calculator')
print(thread.pk)
"""
EXPECTED = [f"question {n}" if n % 2 else f"answer {n}" for n in range(1, MESSAGES + 1)]
TEXTS = "[...document.querySelectorAll('#messages .message .message-text')].map((e) => e.textContent.trim())"
COUNT = "document.querySelectorAll('#messages .message .message-text').length"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-thread-pages")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0.01")
    manage(env, "migrate", "--noinput")
    thread_id = manage(env, "shell", "-c", SEED).strip().splitlines()[-1]
    with daphne(env) as base_url:
        yield base_url, thread_id


def open_thread(browser, base_url, thread_id, *, init_script=None):
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    page = context.new_page()
    if init_script:
        page.add_init_script(init_script)
    sign_in(page, base_url, "ada", "lovelace-1815")
    page.goto(f"{base_url}/t/{thread_id}/")
    connected(page)
    wait_until(page, "!document.querySelector('#messages [data-prerendered]')")
    return context, page


def in_view(page, selector_js: str) -> bool:
    """Whether the element is inside the conversation's visible box."""
    return page.evaluate(
        f"(() => {{ const e = {selector_js}; if (!e) return false; const m = document.querySelector('#messages')"
        ".getBoundingClientRect(); const r = e.getBoundingClientRect();"
        " return r.bottom > m.top && r.top < m.bottom; })()"
    )


def finish_checks(page):
    """Every message once, in order; the older pages' tool cards and versions drawn as the newest are."""
    assert page.evaluate(TEXTS) == EXPECTED
    assert page.locator("#messages .tool-card .tool-name").all_text_contents() == ["calculator"] * TOOL_CALLS
    question = page.locator("#messages .message.user").nth(1)
    assert question.locator(".message-text").text_content() == "question 3"
    assert question.locator(".versions .version-count").text_content() == "2 / 2"
    assert "first try" not in page.locator("#messages").text_content()


def test_scrolling_up_brings_in_every_earlier_message_once_in_order(app, browser):
    base_url, thread_id = app
    context, page = open_thread(browser, base_url, thread_id)
    try:
        # Opened on the newest: the end in view, only a page of the conversation built.
        assert page.evaluate(TEXTS)[-1] == f"answer {MESSAGES}"
        assert page.evaluate(COUNT) < MESSAGES // 4
        wait_until(
            page,
            "(() => { const m = document.querySelector('#messages');"
            " return m.scrollHeight - m.scrollTop - m.clientHeight < 60; })()",
        )
        assert in_view(page, "[...document.querySelectorAll('#messages .message')].pop()")
        box = page.locator("#messages").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        for _ in range(300):
            if page.evaluate(COUNT) == MESSAGES and in_view(page, "document.querySelector('#messages .message')"):
                break
            page.mouse.wheel(0, -2500)
            page.wait_for_timeout(60)
        assert in_view(page, "document.querySelector('#messages .message')")
        assert page.locator("#messages .message .message-text").first.text_content() == "question 1"
        assert page.locator(".earlier-pages-status").text_content() == "This is the start of the conversation."
        finish_checks(page)
    finally:
        context.close()


def test_the_button_loads_earlier_pages_from_the_keyboard_without_moving_the_conversation(app, browser):
    """The button alone (a browser without IntersectionObserver loads nothing by itself): Enter loads the page before,
    what was in view stays where it was, and the focus stays on the button until the start is reached."""
    base_url, thread_id = app
    context, page = open_thread(browser, base_url, thread_id, init_script="delete window.IntersectionObserver;")
    try:
        page.focus(".earlier-pages-load")
        before = page.evaluate(COUNT)
        reference = "document.querySelector('#messages .earlier-pages + *')"
        top = page.evaluate(f"{reference}.getBoundingClientRect().top")
        page.evaluate(f"(() => {{ {reference}.dataset.reference = 'yes'; }})()")
        page.keyboard.press("Enter")
        wait_until(page, f"{COUNT} > {before}")
        wait_until(page, "!document.querySelector('.earlier-pages[aria-busy]')")
        moved = page.evaluate("document.querySelector('[data-reference]').getBoundingClientRect().top")
        assert abs(moved - top) <= 2, (top, moved)
        # A frame later the page's messages are no longer laid out while out of sight (app.css `.settled`), each at
        # the size it was shown at: nothing moves.
        wait_until(page, "document.querySelectorAll('#messages > .message.settled').length > 0")
        settled = page.evaluate("document.querySelectorAll('#messages > .message.settled').length")
        newest_page = page.evaluate("document.querySelectorAll('#messages > .message:not(.settled)').length")
        assert settled >= 1 and newest_page >= 1, (settled, newest_page)  # the snapshot's page is left as it was
        page.wait_for_timeout(200)
        still = page.evaluate("document.querySelector('[data-reference]').getBoundingClientRect().top")
        assert abs(still - top) <= 2, (top, still)
        status = page.locator(".earlier-pages-status")
        assert status.text_content().startswith("Loaded ") and status.get_attribute("role") == "status"
        assert page.evaluate("document.activeElement.classList.contains('earlier-pages-load')")
        for _ in range(40):
            if status.text_content() == "This is the start of the conversation.":
                break
            count = page.evaluate(COUNT)
            page.keyboard.press("Enter")
            wait_until(page, f"{COUNT} > {count}")
            wait_until(page, "!document.querySelector('.earlier-pages[aria-busy]')")
        assert status.text_content() == "This is the start of the conversation."
        assert page.locator(".earlier-pages-load").is_hidden()
        assert page.evaluate("document.activeElement.classList.contains('earlier-pages-status')")
        finish_checks(page)
    finally:
        context.close()


def test_the_server_rendered_end_is_in_view_before_the_pages_modules_run(app, browser):
    # The page's first paint shows what the server rendered; the modules (app.js and its imports) come later. Blocked
    # here, so that only the page's own HTML and its classic script speak: the newest message must already be in view.
    base_url, thread_id = app
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    page = context.new_page()
    sign_in(page, base_url, "ada", "lovelace-1815")
    page.route("**/static/chat/app.js", lambda route: route.abort())
    page.goto(f"{base_url}/t/{thread_id}/")
    wait_until(page, "document.querySelectorAll('#messages [data-prerendered]').length > 1")
    newest = "[...document.querySelectorAll('#messages .message')].pop()"
    assert page.evaluate(f"{newest}.textContent").count(f"answer {MESSAGES}") == 1
    assert in_view(page, newest)
    assert not in_view(page, "document.querySelector('#messages .message')")  # the top of what was rendered is not
    context.close()
