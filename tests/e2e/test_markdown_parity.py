"""The browser's Markdown renderer (static/chat/markdown.js, in real Chromium) and the server's (sharing/markdown.py,
for the first screen of a chat and the shared page) turn the same text into the same HTML: the corpus in
markdown_corpus.py (CommonMark-ish, GFM, hostile input) and random texts of Markdown and markup fragments, rendered
at once and streamed piece by piece. The one difference by design, the Copy button of a code block (a script
feature), is left out of the comparison.
"""

import functools
import http.server
import os
import shutil
import threading

import pytest

from sharing.markdown import render_markdown
from tests.e2e.markdown_corpus import CORPUS, random_texts
from tests.support.browser import CHROMIUM
from tests.support.processes import ROOT

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

pytest.importorskip("playwright.sync_api")

# Both sides as DOM trees of the same browser, written out the same way: the server's HTML parsed by an inert
# document (nothing runs, nothing loads), the browser's fragment as built. Attributes sorted, text escaped.
COMPARE = """async ([cases, stream]) => {
    const md = await import('/chat/markdown.js');
    const escape = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    const write = (node) => {
        if (node.nodeType === Node.TEXT_NODE) return escape(node.data);
        if (node.nodeType !== Node.ELEMENT_NODE) return `<!--${node.nodeType}-->`;
        if (node.matches('button.md-copy')) return '';
        const tag = node.localName;
        const attrs = [...node.attributes].map((a) => ` ${a.name}="${escape(a.value)}"`).sort().join('');
        return `<${tag}${attrs}>${[...node.childNodes].map(write).join('')}</${tag}>`;
    };
    const canon = (root) => { root.normalize(); return [...root.childNodes].map(write).join(''); };
    const inert = document.implementation.createHTMLDocument('');
    return cases.map(([source, html]) => {
        const server = inert.createElement('div');
        server.innerHTML = html;
        const once = document.createElement('div');
        once.append(md.renderMarkdown(source));
        const result = {server: canon(server), once: canon(once)};
        if (stream) {
            const streamed = document.createElement('div');
            const driver = new md.MarkdownStream(streamed);
            for (let i = 0; i < source.length; i += 3) {
                driver.append(source.slice(i, i + 3));
                driver.cancel();  // render now rather than on the next animation frame
                driver.render();
            }
            driver.finish(source);
            for (const chunk of [...streamed.querySelectorAll('.md-chunk')]) chunk.replaceWith(...chunk.childNodes);
            result.streamed = canon(streamed);
        }
        return result;
    });
}"""


@pytest.fixture(scope="module")
def static_page(browser):
    """A page of a local HTTP server of the app's static/ folder, from which markdown.js is imported."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(ROOT / "static")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    page = browser.new_page()
    page.goto(f"http://127.0.0.1:{server.server_address[1]}/chat/")
    try:
        yield page
    finally:
        page.close()
        server.shutdown()
        server.server_close()


def differences(page, sources: list[str], *, stream: bool) -> list[tuple[str, str, str]]:
    """(source, server's HTML, browser's HTML) for each source the two render differently."""
    results = page.evaluate(COMPARE, [[[source, render_markdown(source)] for source in sources], stream])
    found = []
    for source, result in zip(sources, results, strict=True):
        for way in ("once", "streamed"):
            if way in result and result[way] != result["server"]:
                found.append((source, result["server"], f"{way}: {result[way]}"))
    return found


def test_the_browser_renders_the_corpus_as_the_server_does_at_once_and_streamed(static_page):
    found = differences(static_page, CORPUS, stream=True)
    assert found == [], f"{len(found)} of {len(CORPUS)} differ; the first: {found[:3]}"


def test_the_browser_renders_random_markdown_and_markup_as_the_server_does(static_page):
    texts = random_texts(400, seed=12)
    found = differences(static_page, texts, stream=False)
    assert found == [], f"{len(found)} of {len(texts)} differ; the first: {found[:3]}"


def test_the_browser_streams_random_markdown_to_what_the_server_renders(static_page):
    texts = random_texts(60, seed=1212)
    found = differences(static_page, texts, stream=True)
    assert found == [], f"{len(found)} of {len(texts)} differ; the first: {found[:3]}"
