"""Sharing a conversation in real Chromium: the owner shares from the thread's header, a visitor who is not
logged in opens the link (with and without JavaScript), the owner revokes it and the link 404s. A thread with
Markdown and script payloads in its answer and tool result shows the Markdown as HTML and the payloads as text.

AGENTWEB_SCREENSHOTS=1 also writes the share menu, the shared page and the list of links to docs/screenshots/.
"""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, sign_in, wait_until
from tests.support.processes import ROOT, app_environment, create_user, daphne, manage

USER, PASSWORD = "grace", "hopper-1906"
SCREENSHOTS = ROOT / "docs" / "screenshots"

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


def screenshot(page, name):
    """For the docs, with AGENTWEB_SCREENSHOTS=1."""
    if os.environ.get("AGENTWEB_SCREENSHOTS"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(300)  # CSS transitions (a tool card's arrow turning) end first
        page.screenshot(path=str(SCREENSHOTS / name))


@pytest.fixture(scope="module")
def app_env(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("share")
    env = app_environment(
        tmp_path,
        AGENTWEB_LLM_API="demo",
        AGENTWEB_DEMO_DELAY="0",
        AGENTWEB_USER_AGENTS="1",
        AGENTWEB_SYSTEM_PROMPT="The operator's own instructions.",
    )
    manage(env, "migrate", "--noinput")
    create_user(env, USER, PASSWORD)
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from agents.models import Agent; "
        f"Agent.objects.create(slug='brief', name='Brief', owner=User.objects.get(username={USER!r}), "
        "system_prompt='Answer in one line.')",
    )
    return env


@pytest.fixture(scope="module")
def app(app_env):
    with daphne(app_env) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def owner_page(app, browser):
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, USER, PASSWORD)
    yield page
    context.close()


@pytest.fixture(scope="module")
def share_url(owner_page):
    """The owner asks the demo model a question that calls a tool, then shares the thread from its header."""
    page = owner_page
    page.fill("#composer-input", "what is 23*19?")
    page.keyboard.press("Enter")
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("23*19 = 437")
    expect(page.locator("#stop")).to_be_hidden()  # the run is over
    page.click("#share-toggle")
    # The global prompt, which only a superuser can read: the form does not offer to show it.
    expect(page.locator("#share-prompt-not-shared")).to_have_text("The system prompt is not shared.")
    expect(page.locator("#share-hide-prompt")).to_be_hidden()
    page.click("#share-create")
    url_input = page.locator("#share-url")
    expect(url_input).to_be_visible()
    url = url_input.input_value()
    screenshot(page, "share-menu.png")
    assert "/s/" in url
    return url


def test_it_opens_for_a_visitor_who_is_not_logged_in_and_shows_the_conversation(browser, share_url):
    context = browser.new_context()
    page = context.new_page()
    response = page.goto(share_url)
    assert response.status == 200
    expect(page.locator(".message.user .message-text")).to_have_text("what is 23*19?")
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("23*19 = 437")
    card = page.locator(".tool-card").first
    expect(card.locator(".tool-name")).to_have_text("calculator")
    card.locator("summary").click()
    expect(card.locator(".tool-result-text")).to_have_text("437")
    assert page.locator("#user-name, #composer-input, script").count() == 0
    screenshot(page, "shared-page.png")
    context.close()


def test_it_shows_the_conversation_with_javascript_disabled(browser, share_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    assert page.goto(share_url).status == 200
    expect(page.locator(".message.assistant .message-text").last).to_contain_text("23*19 = 437")
    card = page.locator(".tool-card").first
    expect(card.locator(".tool-result-text")).to_be_hidden()
    card.locator("summary").click()  # <details> opens without a script
    expect(card.locator(".tool-result-text")).to_have_text("437")
    context.close()


def test_it_404s_once_the_owner_revokes_it(app, browser, owner_page, share_url):
    owner_page.goto(f"{app}/shares/")
    screenshot(owner_page, "share-links.png")
    owner_page.locator(".share-item").first.get_by_role("link", name="Revoke…").click()
    expect(owner_page.locator("h1")).to_have_text("Revoke this link?")  # it asks first; Cancel goes back
    owner_page.get_by_role("link", name="Cancel").click()
    expect(owner_page.locator(".share-item").first).not_to_contain_text("revoked")
    owner_page.locator(".share-item").first.get_by_role("link", name="Revoke…").click()
    owner_page.get_by_role("button", name="Revoke the link").click()
    expect(owner_page.locator(".share-item").first).to_contain_text("revoked")
    context = browser.new_context()
    page = context.new_page()
    assert page.goto(share_url).status == 404
    expect(page.locator("body")).not_to_contain_text("23*19 = 437")
    context.close()


MARKDOWN_ANSWER = """## Results

| Name | Count |
| :--- | ----: |
| apples | 3 |
| <img src=x onerror="window.__pwned=2"> | 4 |

```python
print("<script>window.__pwned=3</script>")
```

<script>window.__pwned=1</script><svg onload="window.__pwned=4"></svg><iframe src="javascript:window.__pwned=5">

[click me](javascript:window.__pwned=6) and ![a cat](https://images.example/cat.png)"""
TOOL_RESULT_XSS = '<script>window.__pwned=7</script><img src=x onerror="window.__pwned=8">'


@pytest.fixture(scope="module")
def markdown_share_url(app, app_env):
    """A finished thread of another user whose answer is Markdown full of payloads, shared; its address."""
    script = f"""
from django.contrib.auth.models import User
from chat.models import Message, Thread, ToolCall
from sharing import services
owner = User.objects.create_user("ada", password="lovelace-1815")
thread = Thread.objects.create(owner=owner, title="A table and some code")
Message.objects.create(thread=thread, order=1, role="user", content="show me **a table**")
asking = Message.objects.create(thread=thread, order=2, role="assistant", content="", finish_reason="tool_calls")
ToolCall.objects.create(
    message=asking, call_id="call_1", name="lookup", args={{"q": "fruit"}}, status="success",
    result={TOOL_RESULT_XSS!r}, duration_ms=5,
)
Message.objects.create(thread=thread, order=3, role="assistant", content={MARKDOWN_ANSWER!r}, finish_reason="stop")
print(services.create_link(thread=thread, display_name="Ada").token)
"""
    token = manage(app_env, "shell", "-c", script).strip().splitlines()[-1]
    return f"{app}/s/{token}/"


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_it_renders_markdown_as_html_and_script_payloads_as_text(browser, markdown_share_url, javascript):
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    assert page.goto(markdown_share_url).status == 200
    expect(page.locator(".message.user .message-text")).to_have_text("show me **a table**")
    answer = page.locator(".message.assistant .message-text.markdown")
    expect(answer.locator("h2")).to_have_text("Results")
    expect(answer.locator("table th")).to_have_text(["Name", "Count"])
    expect(answer.locator("table td.align-right").first).to_have_text("3")
    expect(answer.locator("table td").nth(2)).to_have_text('<img src=x onerror="window.__pwned=2">')
    expect(answer.locator(".md-code .md-code-lang")).to_have_text("python")
    expect(answer.locator("pre code.language-python")).to_have_text('print("<script>window.__pwned=3</script>")')
    expect(answer).to_contain_text('<script>window.__pwned=1</script><svg onload="window.__pwned=4"></svg>')
    expect(answer.locator(".md-link-removed")).to_have_text("click me")
    image = answer.locator("a.md-image")
    expect(image).to_have_text("image: a cat (click to open)")
    expect(image).to_have_attribute("rel", "noopener noreferrer nofollow")
    card = page.locator(".tool-card").first
    card.locator("summary").click()
    expect(card.locator(".tool-result-text")).to_have_text(TOOL_RESULT_XSS)
    assert page.locator("script, img, svg, iframe, [onerror], [onload], [href^='javascript']").count() == 0
    wait_until(page, "document.readyState === 'complete'")
    assert page.evaluate("() => window.__pwned") is None
    context.close()


def test_a_new_chat_with_the_owners_own_agent_offers_to_show_its_prompt(app, browser, owner_page, share_url):
    page = owner_page
    page.goto(f"{app}/")
    page.locator('.agent-choice[data-slug="brief"]').click()
    page.fill("#composer-input", "hello")
    page.keyboard.press("Enter")
    expect(page.locator(".message.assistant .message-text").last).not_to_be_empty()
    expect(page.locator("#stop")).to_be_hidden()
    page.click("#share-toggle")  # the page was drawn for the empty chat: it asks about the thread it now shows
    expect(page.locator("#share-hide-prompt")).to_be_visible()
    expect(page.locator("#share-prompt-not-shared")).to_be_hidden()
    page.locator("#share-hide-prompt").uncheck()
    page.click("#share-create")
    expect(page.locator("#share-url")).to_be_visible()
    url = page.locator("#share-url").input_value()
    page.locator("#share-menu summary").click()  # closes the menu
    context = browser.new_context()
    visitor = context.new_page()
    assert visitor.goto(url).status == 200
    expect(visitor.locator("body")).to_contain_text("Answer in one line.")
    context.close()
