"""The server-side Markdown (sharing/markdown.py): the constructs and the safety rules it shares with the browser's
renderer, static/chat/markdown.js (tests/e2e/test_markdown_parity.py compares the two)."""

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharing.markdown import LINK_REL, render_markdown, safe_url

# Every element and attribute the renderer may write; anything else in its output came from the input.
ALLOWED = {
    "h1": set(),
    "h2": set(),
    "h3": set(),
    "h4": set(),
    "h5": set(),
    "h6": set(),
    "p": set(),
    "br": set(),
    "hr": set(),
    "em": set(),
    "strong": set(),
    "del": set(),
    "blockquote": set(),
    "ul": set(),
    "ol": {"start"},
    "li": {"class"},
    "input": {"type", "disabled", "checked"},
    "div": {"class"},
    "pre": set(),
    "code": {"class"},
    "span": {"class", "title"},
    "a": {"class", "href", "target", "rel", "title"},
    "table": set(),
    "thead": set(),
    "tbody": set(),
    "tr": set(),
    "th": {"class"},
    "td": {"class"},
}


class Elements(HTMLParser):
    """The start tags of an HTML string as a browser's tokenizer sees them, with their attributes."""

    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.found if tag == name]


def elements(source: str) -> Elements:
    return Elements(render_markdown(source))


# ---------------------------------------------------------------- what it renders


def test_it_renders_atx_and_setext_headings():
    html = render_markdown("# One\n\n### Three\n\nTwo\n---")
    assert "<h1>One</h1>" in html and "<h3>Three</h3>" in html and "<h2>Two</h2>" in html


def test_it_renders_emphasis_strong_and_strikethrough_as_del():
    html = render_markdown("*em* **strong** ~~gone~~")
    assert "<em>em</em>" in html and "<strong>strong</strong>" in html and "<del>gone</del>" in html


def test_it_renders_inline_code_with_its_markup_escaped():
    assert "<code>a &lt;b&gt; c</code>" in render_markdown("`a <b> c`")


def test_it_renders_nested_bullet_and_ordered_lists():
    html = render_markdown("- one\n- two\n  - nested\n\n3. three\n4. four")
    assert "<ul>\n<li>one</li>\n<li>two\n<ul>\n<li>nested</li>" in html
    assert '<ol start="3">' in html


def test_it_renders_task_list_items_as_disabled_checkboxes():
    found = elements("- [x] done\n- [ ] todo")
    assert [attrs.get("class") for attrs in found.tags("li")] == ["md-task", "md-task"]
    boxes = found.tags("input")
    assert [("disabled" in box, "checked" in box) for box in boxes] == [(True, True), (True, False)]


def test_it_renders_a_table_wrapped_like_the_app_with_alignment_as_classes_not_styles():
    html = render_markdown("| Name | Count |\n| :--- | ----: |\n| apples | 3 |")
    assert html.startswith('<div class="md-table"><table>')
    assert '<th class="align-left">Name</th>' in html and '<td class="align-right">3</td>' in html
    assert "style" not in html


def test_it_renders_a_fenced_code_block_with_its_language_and_escaped_content():
    html = render_markdown('```python\nprint("<b>hi</b>")\n```')
    assert html == (
        '<div class="md-code"><div class="md-code-bar"><span class="md-code-lang">python</span></div>'
        '<pre><code class="language-python">print(&quot;&lt;b&gt;hi&lt;/b&gt;&quot;)</code></pre></div>\n'
    )


def test_it_keeps_only_word_characters_of_a_code_language():
    found = elements('```py"><script>x\ncode\n```')
    assert found.tags("code") == [{"class": "language-pyscriptx"}]


def test_it_renders_an_indented_code_block_labelled_code():
    html = render_markdown("    x = 1\n")
    assert '<span class="md-code-lang">code</span>' in html and "<pre><code>x = 1</code></pre>" in html


def test_it_leaves_out_the_copy_button_which_needs_javascript():
    assert "<button" not in render_markdown("```\ncode\n```")


def test_it_renders_block_quotes_and_thematic_breaks():
    html = render_markdown("> quoted\n\n***")
    assert "<blockquote>\n<p>quoted</p>\n</blockquote>" in html and "<hr>" in html


def test_it_renders_a_hard_break_as_one_line_break():
    # A "\n" after the <br> would be a second break: paragraphs keep their line breaks (white-space: pre-line).
    assert render_markdown("line\\\nbreak") == "<p>line<br>break</p>\n"
    assert render_markdown("line  \nbreak") == "<p>line<br>break</p>\n"


def test_it_keeps_a_backslash_escaped_character_as_text():
    assert render_markdown(r"\*not em\*") == "<p>*not em*</p>\n"


def test_it_drops_a_byte_order_mark_which_the_browsers_markdown_it_would_trim():
    assert render_markdown("\ufeffa\ufeff") == "<p>a</p>\n"


def test_it_does_not_decode_entities_as_the_browser_renderer_does_not():
    assert render_markdown("&lt;b&gt;") == "<p>&amp;lt;b&amp;gt;</p>\n"


# ---------------------------------------------------------------- links


def test_it_renders_an_http_link_in_a_new_tab_with_rel_noopener_noreferrer_nofollow():
    found = elements('[the docs](https://example.com/docs "Docs")')
    assert found.tags("a") == [
        {"href": "https://example.com/docs", "target": "_blank", "rel": LINK_REL, "title": "Docs"}
    ]
    assert LINK_REL == "noopener noreferrer nofollow"


def test_it_renders_a_mailto_link():
    assert elements("[write](mailto:ada@example.com)").tags("a")[0]["href"] == "mailto:ada@example.com"


def test_it_links_autolinks_and_bare_urls_without_trailing_punctuation():
    found = elements("<https://a.example/x> and see https://b.example/y_(z)). Then stop.")
    assert [attrs["href"] for attrs in found.tags("a")] == ["https://a.example/x", "https://b.example/y_(z)"]


@pytest.mark.parametrize(
    "target",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "javascript&#58;alert(1)",
        "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "/relative/path",
        "//example.com/protocol-relative",
    ],
)
def test_it_keeps_the_words_but_not_the_link_for_an_unsafe_target(target):
    html = render_markdown(f"[click me]({target})")
    assert "<a" not in html and "href" not in html
    assert (
        '<span class="md-link-removed" title="link removed (not an http, https or mailto address)">click me</span>'
        in html
    )


def test_it_shows_reference_style_links_and_their_definitions_as_text_as_the_streaming_browser_does():
    html = render_markdown("[click][ref]\n\n[ref]: https://e.example/")
    assert html.startswith("<p>[click][ref]</p>\n<p>[ref]: <a href")
    assert elements("[click][ref]\n\n[ref]: https://e.example/").tags("a")[0]["href"] == "https://e.example/"
    assert "<a" not in render_markdown("[click][ref]\n\n[ref]: javascript:alert(1)")


def test_a_link_inside_a_link_keeps_only_its_words():
    found = elements("[<https://a.example/>](https://b.example/)")
    assert [attrs["href"] for attrs in found.tags("a")] == ["https://b.example/"]
    assert ">https://a.example/</a>" in render_markdown("[<https://a.example/>](https://b.example/)")


def test_it_shows_an_unsafe_autolink_as_the_text_it_is():
    assert render_markdown("<javascript:alert(1)>") == "<p>&lt;javascript:alert(1)&gt;</p>\n"


@pytest.mark.parametrize(
    "href", ["https://example.com/", "http://example.com/a?b=c#d", "mailto:ada@example.com", " HTTPS://x.y "]
)
def test_safe_url_accepts_absolute_http_https_and_mailto(href):
    assert safe_url(href) == href.strip()


@pytest.mark.parametrize(
    "href",
    [
        "javascript:alert(1)",
        "data:,x",
        "vbscript:x",
        "https:no-host",
        "java\tscript:x",
        "http://[::1]/",
        "http://%5B::1%5D/",
        "",
        None,
        3,
    ],
)
def test_safe_url_refuses_everything_else(href):
    assert safe_url(href) is None


# ---------------------------------------------------------------- images


def test_an_external_image_becomes_a_link_to_open_it_and_never_an_img():
    found = elements("![a cat](https://images.example/cat.png)")
    assert found.tags("img") == []
    assert found.tags("a") == [
        {
            "class": "md-image",
            "href": "https://images.example/cat.png",
            "target": "_blank",
            "rel": LINK_REL,
            "title": "https://images.example/cat.png",
        }
    ]
    assert "image: a cat (click to open)</a>" in render_markdown("![a cat](https://images.example/cat.png)")


@pytest.mark.parametrize("src", ["data:image/png;base64,iVBORw0KGgo=", "javascript:alert(1)", "mailto:a@b.c", "x.png"])
def test_an_image_with_an_unsafe_address_is_only_its_label(src):
    assert render_markdown(f"![chart]({src})") == '<p><span class="md-image md-link-removed">image: chart</span></p>\n'


def test_an_image_inside_a_link_is_only_its_label_inside_that_link():
    found = elements("[![logo](https://e.example/logo.png)](https://e.example/)")
    assert [attrs["href"] for attrs in found.tags("a")] == ["https://e.example/"]
    assert found.tags("span") == [{"class": "md-image md-link-removed"}]


def test_an_image_without_alt_text_is_labelled_untitled():
    assert "image: untitled (click to open)" in render_markdown("![](https://e.example/x.png)")


# ---------------------------------------------------------------- raw HTML


@pytest.mark.parametrize(
    ("payload", "escaped"),
    [
        ("<script>window.__pwned=1</script>", "&lt;script&gt;window.__pwned=1&lt;/script&gt;"),
        ('<img src=x onerror="window.__pwned=2">', "&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;"),
        ('<iframe src="about:blank"></iframe>', "&lt;iframe src=&quot;about:blank&quot;&gt;&lt;/iframe&gt;"),
        ("<svg onload=window.__pwned=3>", "&lt;svg onload=window.__pwned=3&gt;"),
    ],
)
def test_raw_html_is_shown_as_escaped_text(payload, escaped):
    for source in (payload, f"text {payload} text", f"- {payload}", f"| a |\n| - |\n| {payload} |"):
        html = render_markdown(source)
        assert escaped in html
        assert [tag for tag, _ in Elements(html).found if tag in {"script", "img", "iframe", "svg"}] == []


def test_a_raw_html_block_is_shown_as_text():
    html = render_markdown('<div onclick="x()">\n<script>alert(1)</script>\n</div>')
    assert html.startswith("<p>&lt;div onclick=&quot;x()&quot;&gt;")
    assert Elements(html).tags("script") == []


# ---------------------------------------------------------------- whatever the text


FRAGMENTS = [
    "<script>",
    "</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<iframe src=x>",
    "<a href='javascript:alert(1)'>",
    "javascript:",
    "JAVASCRIPT:",
    "data:",
    "vbscript:",
    "mailto:",
    "http://",
    "https://e.example/",
    "&#106;",
    "&#x3A;",
    "&lt;",
    '"',
    "'",
    "`",
    "```",
    "~~~",
    "[",
    "]",
    "(",
    ")",
    "!",
    "![",
    "](",
    "<",
    ">",
    "\\",
    "*",
    "_",
    "~~",
    "|",
    "-",
    "#",
    "1.",
    "[ ]",
    "[x]",
    " ",
    "    ",
    "\t",
    "\n",
    "\n\n",
    " onload=",
    " style=",
    "x",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_whatever_the_text_only_the_renderers_own_elements_attributes_and_safe_links_come_out(text):
    html = render_markdown(text)
    for tag, attrs in Elements(html).found:
        assert tag in ALLOWED, (tag, html)
        assert set(attrs) <= ALLOWED[tag], (tag, attrs, html)
        if "href" in attrs:
            assert safe_url(attrs["href"]) and not attrs["href"].lower().startswith(("javascript", "data", "vbscript"))
            assert attrs["rel"] == LINK_REL and attrs["target"] == "_blank"
    assert "<script" not in html.lower()
