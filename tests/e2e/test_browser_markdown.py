"""Markdown in assistant messages, in real Chromium against the real app (Daphne) and a scripted model server:
rendered (headings, lists, tables, code with Copy, links), sanitised (model output never runs script, never
loads an external image, never gets a javascript: link), and streamed block by block (finished paragraphs keep
their elements while the answer grows).
"""

import http.server
import os
import shutil
import subprocess
import threading
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, wait_until
from tests.support.processes import PYTHON, ROOT, app_environment, free_port, manage, model_server, stop, wait_for_port

USER, PASSWORD = "grace", "hopper-1906"

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)

MARKDOWN = """# Release notes

Some **bold** words, some *emphasis* and `inline code`.

- first item
- second item
  - nested item

| Name | Count |
| :--- | ----: |
| apples | 3 |
| pears | 12 |

```python
print("hello <b>world</b>")
```

> quoted

See [the docs](https://example.com/docs) for more."""

LONG = "\n\n".join(f"Paragraph {n}: " + " ".join(f"word{n}_{k}" for k in range(12)) for n in range(1, 9))


@contextmanager
def counting_server():
    """A local HTTP server that counts the requests it gets (an image the page must never fetch)."""
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("markdown-db")
    env = app_environment(tmp_path)
    manage(env, "migrate", "--noinput")
    manage(
        env,
        "shell",
        "-c",
        f"from django.contrib.auth.models import User; User.objects.create_user('{USER}', password='{PASSWORD}')",
    )
    return tmp_path / "e2e.sqlite3"


@pytest.fixture
def start_app(migrated_db, tmp_path):
    """start_app(script) → the base URL of a Daphne whose model answers from `script`."""
    with ExitStack() as stack:

        def start(script):
            model_url = stack.enter_context(model_server(script, tmp_path))
            shutil.copy(migrated_db, tmp_path / "e2e.sqlite3")
            env = app_environment(
                tmp_path,
                AGENTWEB_LLM_API="openai",
                AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
                AGENTWEB_LLM_MODEL="m",
            )
            port = free_port()
            log = stack.enter_context(open(Path(tmp_path) / "daphne.log", "a"))
            process = subprocess.Popen(
                [PYTHON, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "agentweb.asgi:application"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            stack.callback(stop, process)
            wait_for_port(port, process)
            return f"http://127.0.0.1:{port}"

        yield start


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 900, "height": 800})
    yield context
    context.close()


def log_in(context, base_url):
    page = context.new_page()
    page.goto(f"{base_url}/")
    page.fill("#id_username", USER)
    page.fill("#id_password", PASSWORD)
    page.click("#login-form [type=submit]")
    page.wait_for_selector("#composer-input")
    expect(page.locator("#connection-state")).to_have_attribute("data-state", "connected")
    return page


def ask(page, text):
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")


def finished(page):
    expect(page.locator(".message.assistant[data-status='complete']")).to_have_count(1)
    expect(page.locator("#stop")).to_be_hidden()


def answer(page):
    return page.locator(".message.assistant .message-text").last


def test_markdown_answer_renders_headings_lists_tables_code_and_links(start_app, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = log_in(context, start_app([{"text": MARKDOWN}]))
    ask(page, "release notes please")
    finished(page)
    for check in range(2):  # as streamed, then as the snapshot after a reload renders it
        body = answer(page)
        expect(body.locator("h1")).to_have_text("Release notes")
        expect(body.locator("p strong")).to_have_text("bold")
        expect(body.locator("p em")).to_have_text("emphasis")
        expect(body.locator("p > code")).to_have_text("inline code")
        expect(body.locator("ul > li")).to_have_count(3)
        expect(body.locator("ul ul > li")).to_have_text("nested item")
        expect(body.locator("table th")).to_have_text(["Name", "Count"])
        expect(body.locator("table tbody tr")).to_have_count(2)
        expect(body.locator("table tbody tr").last.locator("td")).to_have_text(["pears", "12"])
        expect(body.locator("table td.align-right").first).to_have_text("3")
        expect(body.locator("blockquote")).to_have_text("quoted")
        code = body.locator(".md-code pre > code")
        expect(code).to_have_text('print("hello <b>world</b>")')
        expect(code).to_have_class("language-python")
        assert body.locator("b").count() == 0
        link = body.locator("a", has_text="the docs")
        expect(link).to_have_attribute("href", "https://example.com/docs")
        expect(link).to_have_attribute("target", "_blank")
        expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")
        if check == 0:
            page.reload()
            page.wait_for_selector(".message.assistant .md-code")
    copy = answer(page).locator(".md-copy")
    expect(copy).to_have_text("Copy")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == 'print("hello <b>world</b>")'
    expect(copy).to_have_text("Copy", timeout=5000)


def test_markup_and_unsafe_links_in_an_answer_never_run_and_images_are_not_loaded(start_app, context):
    with counting_server() as (port, hits):
        xss = (
            'Hello <img src=x onerror="window.__pwned=1"> there.\n\n'
            "<script>window.__pwned=2</script>\n\n"
            "[click me](javascript:window.__pwned=3) and [data](data:text/html,<script>window.__pwned=4</script>)\n\n"
            '<a href="javascript:window.__pwned=5">raw link</a>\n\n'
            '<iframe src="javascript:window.__pwned=6"></iframe>\n\n'
            f"![a cat](http://127.0.0.1:{port}/img.png)\n\n"
            '<svg onload="window.__pwned=7"></svg> <b onmouseover="window.__pwned=8">hover</b>'
        )
        page = log_in(context, start_app([{"text": xss}]))
        ask(page, "say something nasty")
        finished(page)
        for check in range(2):
            body = answer(page)
            expect(body.locator("a", has_text="raw link")).to_have_count(0)  # it is text, not a link
            expect(body).to_contain_text("<script>window.__pwned=2</script>")
            expect(body).to_contain_text('<img src=x onerror="window.__pwned=1">')
            # What the messages' text made: the page's own icons (actions, author marks) are SVG, the text's none.
            assert page.locator(".message-text :is(script, iframe, img, svg)").count() == 0
            assert body.locator("[onerror], [onload], [onmouseover], [onclick]").count() == 0
            hrefs = body.locator("a").evaluate_all("(links) => links.map((a) => a.getAttribute('href'))")
            assert all(h.startswith(("http://", "https://", "mailto:")) for h in hrefs), hrefs
            expect(body.locator(".md-link-removed", has_text="click me")).to_have_count(1)
            image = body.locator("a.md-image")
            expect(image).to_contain_text("image: a cat")
            expect(image).to_have_attribute("rel", "noopener noreferrer nofollow")
            body.locator(".md-link-removed", has_text="click me").click()
            body.locator("p", has_text="hover").hover()
            if check == 0:
                page.reload()
                page.wait_for_selector(".message.assistant a.md-image")
        page.wait_for_timeout(300)
        assert page.evaluate("window.__pwned") is None
        assert hits == []


def test_streaming_keeps_finished_paragraphs_and_rerenders_only_the_tail(start_app, context):
    page = log_in(context, start_app([{"text": LONG, "delay_ms": 15}]))
    ask(page, "a long answer")
    body = ".message.assistant .message-text"
    wait_until(page, f"document.querySelectorAll('{body} p').length >= 3")
    # Tag the paragraphs already finished (all but the growing last one) and record every later mutation.
    tagged = page.evaluate(
        f"""() => {{
        const ps = [...document.querySelectorAll('{body} p')].slice(0, -1);
        ps.forEach((p, n) => {{ p.__tag = n + 1; }});
        window.__removed = 0;
        new MutationObserver((records) => {{
            for (const r of records) for (const n of r.removedNodes) if (n.__tag) window.__removed += 1;
        }}).observe(document.querySelector('{body}'), {{childList: true}});
        return ps.length;
    }}"""
    )
    assert tagged >= 2
    streamed_more = f"document.querySelectorAll('{body} p').length >= {tagged + 3}"
    wait_until(page, streamed_more)
    assert page.locator(".message.assistant[data-status='streaming']").count() == 1  # still streaming
    finished(page)
    kept = page.evaluate(
        f"() => [...document.querySelectorAll('{body} p')].slice(0, {tagged}).map((p) => p.__tag || 0)"
    )
    assert kept == list(range(1, tagged + 1))
    assert page.evaluate("window.__removed") == 0
    texts = answer(page).locator("p").all_text_contents()
    assert texts == LONG.split("\n\n")


STREAM_CASES = [
    "1. a\n\n2. b\n\n3. c",
    "- a\n  - b\n    - c\n- d\n\nafter",
    "Title\n=====\n\ntext\nmore  \nbreak",
    "```js\nlet a = 1;\n\n\nlet b = 2;\n```\n\nafter",
    "a | b\n--|--\n1 | `x|y`\n\n> quote\n> more\n\n---\n\n    indented code\n\n    still code\n\nend",
    "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html,hi) [w](/relative) "
    "[v](java\nscript:alert(1)) <javascript:alert(1)> [ok](https://example.com/a_(b))",
]


def test_streamed_rendering_ends_as_the_one_shot_rendering_and_only_safe_links_survive(start_app, context):
    page = log_in(context, start_app([]))
    src = page.evaluate("new URL('markdown.js', document.querySelector('script[src*=\"chat/app\"]').src).href")
    results = page.evaluate(
        """async ([url, cases]) => {
        const md = await import(url);
        return cases.map((src) => {
            const once = document.createElement('div');
            once.append(md.renderMarkdown(src));
            const streamed = document.createElement('div');
            const stream = new md.MarkdownStream(streamed);
            for (const ch of src) { stream.source += ch; stream.render(); }
            stream.finish(src);
            const hrefs = [...once.querySelectorAll('a')].map((a) => a.getAttribute('href'));
            return {same: once.innerHTML === streamed.innerHTML, html: once.innerHTML, hrefs};
        });
    }""",
        [src, STREAM_CASES],
    )
    for case, result in zip(STREAM_CASES, results, strict=True):
        assert result["same"], (case, result["html"])
    assert results[-1]["hrefs"] == ["https://example.com/a_(b)"]
    # The shape of markdown-it's HTML, line breaks between block tags included (a loose list, then a tight one).
    assert results[0]["html"] == "<ol>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n<li>\n<p>c</p>\n</li>\n</ol>\n"
    assert results[1]["html"] == (
        "<ul>\n<li>a\n<ul>\n<li>b\n<ul>\n<li>c</li>\n</ul>\n</li>\n</ul>\n</li>\n<li>d</li>\n</ul>\n<p>after</p>\n"
    )


def test_a_long_streamed_answer_keeps_its_finished_blocks_in_chunks_and_renders_as_one_shot(start_app, context):
    """Past a few dozen finished blocks, a streamed answer keeps them in .md-chunk wrappers (laid out on their own,
    so a frame does not walk the whole answer); without the wrappers it is the one-shot rendering."""
    page = log_in(context, start_app([]))
    src = page.evaluate("new URL('markdown.js', document.querySelector('script[src*=\"chat/app\"]').src).href")
    parts = [MARKDOWN] + [f"Paragraph {n} with **bold** and `code`." for n in range(120)] + ["- a\n- b", "tail"]
    text = "\n\n".join(parts)
    result = page.evaluate(
        """async ([url, src]) => {
        const md = await import(url);
        const once = document.createElement('div');
        once.append(md.renderMarkdown(src));
        const streamed = document.createElement('div');
        const stream = new md.MarkdownStream(streamed);
        for (let i = 0; i < src.length; i += 7) { stream.source = src.slice(0, i + 7); stream.render(); }
        stream.finish(src);
        const chunks = streamed.querySelectorAll(':scope > .md-chunk').length;
        for (const chunk of [...streamed.querySelectorAll('.md-chunk')]) chunk.replaceWith(...chunk.childNodes);
        return {chunks, same: once.innerHTML === streamed.innerHTML};
    }""",
        [src, text],
    )
    assert result["chunks"] >= 3
    assert result["same"]
