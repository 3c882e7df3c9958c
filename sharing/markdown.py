"""Markdown rendered on the server, for the shared page and the first screen of a chat: markdown-it-py, the port
of the markdown-it version the browser runs (static/chat/vendor/), with the same options and the same token rule as
static/chat/markdown-parser.js, so an answer looks the same in the app and on the page, and is just as safe without
JavaScript. tests/e2e/test_markdown_parity.py renders a corpus with both and compares the HTML.

Model output is untrusted. The rules, the same in markdown-parser.js:

- Raw HTML is never interpreted: `<script>`, `<img onerror>`, `<iframe>`… are shown as the text they are
  (markdown-it with `html` off; HTML tokens are escaped here too, should one ever appear). Entities are not
  decoded either: `&lt;` stays the text "&lt;".
- A link is kept only for an absolute http:, https: or mailto: URL; it opens in a new tab with
  rel="noopener noreferrer nofollow". Any other target (javascript:, data:, vbscript:, file:, relative…) keeps
  its words in a `<span class="md-link-removed">` and loses the link.
- Images are never loaded: an image becomes a link "image: alt (click to open)" (class md-image), or a plain
  "image: alt" span when its address is not a safe http(s) URL or it sits inside a link. A link inside a link (an
  autolink in a link's words) keeps only its words: HTML cannot nest links.
- Supported: ATX and setext headings, paragraphs, hard breaks (a `<br>` alone), emphasis/strong/strikethrough
  (`<del>`), inline code, fenced and indented code blocks (`<div class="md-code">` with the language in its bar;
  the Copy button is a script feature of the app and is left out), block quotes, ordered/bullet/task lists, GFM
  tables (alignment as `align-*` classes, never inline styles: the page's CSP forbids them), thematic breaks,
  links, autolinks and bare http(s) URLs, backslash escapes. Not reference-style links: the browser renders a finished
  block once while the answer streams, before a definition further down could reach it, so both show them as text.
- U+FEFF (an invisible byte order mark) is dropped first: markdown-it trims it from a paragraph, markdown-it-py not.

Plain Python: no Django. `render_markdown(text)` returns an HTML string that is safe to put in a page as is.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"
LINK_REMOVED_TITLE = "link removed (not an http, https or mailto address)"

# A bare URL as markdown.js finds it: http(s)://, not right after a word character or a slash, at most 2048
# characters; then trailing punctuation goes back to the sentence and a ")" stays only if it closes a "(".
BARE_URL = re.compile(r"(?<![\w/])https?://[^\s<>]+", re.IGNORECASE | re.ASCII)
BARE_URL_MAX = 2048
TRAILING_PUNCTUATION = frozenset(".,:;!?'\"*_~")
TASK = re.compile(r"\[([ xX])\][ \t]+")
CODE_LANGUAGE = re.compile(r"[ \t\n\r\f\v]*([^ \t\n\r\f\v]*)")
ASCII_SPACE = " \t\n\r\f\v"
CODE_LANGUAGE_JUNK = re.compile(r"[^\w+#.-]", re.ASCII)
BRACKETS = re.compile(r"[\[\]]|%5b|%5d", re.IGNORECASE)
ALIGN_STYLE = re.compile(r"text-align:\s*(left|center|right)")


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def safe_url(href: object) -> str | None:
    """`href` when it is an absolute http(s) URL with a host name or a mailto: URL; None for anything else (an IPv6
    literal host included: rare in an answer, and the browser's safeUrl in markdown-parser.js refuses it alike)."""
    if not isinstance(href, str):
        return None
    href = href.strip(ASCII_SPACE)
    if not href or any(ord(c) < 0x21 or c == "\x7f" for c in href):
        return None
    try:
        parts = urlsplit(href)
    except ValueError:
        return None
    if parts.scheme not in SAFE_SCHEMES:
        return None
    if parts.scheme != "mailto" and (not parts.hostname or BRACKETS.search(parts.netloc)):
        return None
    return href


# ---------------------------------------------------------------- the core rule: links, tasks, tables


def _trim_bare_url(url: str) -> str:
    while url:
        last = url[-1]
        if last in TRAILING_PUNCTUATION or (last == ")" and url.count(")") > url.count("(")):
            url = url[:-1]
        else:
            break
    return url


def _linkify(md: MarkdownIt, token: Token) -> list[Token]:
    """A text token split into text and link tokens around its bare http(s) URLs."""
    text = token.content
    out: list[Token] = []
    start = 0
    for match in BARE_URL.finditer(text):
        if match.start() < start:
            continue
        url = _trim_bare_url(match.group()[:BARE_URL_MAX])
        if len(url) <= len("https://") - 1:
            continue
        if match.start() > start:
            out.append(Token("text", "", 0, content=text[start : match.start()], level=token.level))
        opening = Token("link_open", "a", 1, attrs={"href": md.normalizeLink(url)}, markup="linkify", info="auto")
        out.append(opening)
        out.append(Token("text", "", 0, content=url, level=token.level + 1))
        out.append(Token("link_close", "a", -1, markup="linkify", info="auto"))
        start = match.start() + len(url)
    if not out:
        return [token]
    if start < len(text):
        out.append(Token("text", "", 0, content=text[start:], level=token.level))
    return out


def _sanitise_inline(md: MarkdownIt, children: list[Token]) -> list[Token]:
    # Bare URLs first, outside links only (a link's words are never a second link).
    linked: list[Token] = []
    depth = 0
    for child in children:
        if child.type == "link_open":
            depth += 1
        elif child.type == "link_close":
            depth -= 1
        if child.type == "text" and depth == 0:
            linked.extend(_linkify(md, child))
        else:
            linked.append(child)

    # Then every link is kept only with a safe target, and images learn whether they sit inside a link.
    out: list[Token] = []
    opened: list[str] = []  # each open link: "a", "span", "text" (an unsafe autolink, shown as written) or "" (dropped)
    for child in linked:
        if child.type == "link_open":
            url = safe_url(child.attrGet("href"))
            if opened:
                opened.append("")  # a link inside a link: its words only
                continue
            if url:
                attrs: dict[str, Any] = {"href": url, "target": "_blank", "rel": LINK_REL}
                title = child.attrGet("title")
                if title:
                    attrs["title"] = title
                child.attrs = attrs
                opened.append("a")
            elif child.markup == "autolink":
                # markdown.js knows only <http(s):…> and <mailto:…> autolinks: anything else stays text.
                child = Token("text", "", 0, content="<", level=child.level)
                opened.append("text")
            else:
                child.tag = "span"
                child.attrs = {"class": "md-link-removed", "title": LINK_REMOVED_TITLE}
                opened.append("span")
        elif child.type == "link_close":
            kind = opened.pop() if opened else "a"
            if not kind:
                continue
            if kind == "text":
                child = Token("text", "", 0, content=">", level=child.level)
            else:
                child.tag = kind
        elif child.type == "image":
            child.meta["in_link"] = bool(opened)
        elif child.type in ("s_open", "s_close"):
            child.tag = "del"
        out.append(child)
    return out


def _task_item(tokens: list[Token], i: int) -> None:
    """`- [ ] todo` / `- [x] done`: a disabled checkbox at the start of the item, as markdown.js shows it."""
    inline = tokens[i]
    if i < 2 or tokens[i - 1].type != "paragraph_open" or tokens[i - 2].type != "list_item_open":
        return
    first = inline.children[0] if inline.children else None
    if first is None or first.type != "text":
        return
    match = TASK.match(first.content)
    if not match:
        return
    first.content = first.content[match.end() :]
    box = Token("md_task_box", "input", 0, meta={"checked": match.group(1) != " "})
    inline.children[0:0] = [box, Token("text", "", 0, content=" ")]
    tokens[i - 2].attrSet("class", "md-task")


def _sanitise(state: Any) -> None:
    md = state.md
    tokens: list[Token] = state.tokens
    for i, token in enumerate(tokens):
        if token.type == "inline" and token.children is not None:
            _task_item(tokens, i)
            token.children = _sanitise_inline(md, token.children)
        elif token.type in ("th_open", "td_open"):
            style = token.attrs.pop("style", None)
            match = ALIGN_STYLE.search(str(style or ""))
            if match:
                token.attrSet("class", f"align-{match.group(1)}")


# ---------------------------------------------------------------- render rules


def _code_block(text: str, info: str) -> str:
    lang = CODE_LANGUAGE_JUNK.sub("", CODE_LANGUAGE.match(info).group(1))[:32]
    code_class = f' class="language-{_escape(lang)}"' if lang else ""
    return (
        '<div class="md-code"><div class="md-code-bar">'
        f'<span class="md-code-lang">{_escape(lang or "code")}</span></div>'
        f"<pre><code{code_class}>{_escape(text)}</code></pre></div>\n"
    )


def _render_fence(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    return _code_block(token.content.removesuffix("\n"), token.info)


def _render_code_block(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    return _code_block(tokens[idx].content.rstrip("\n"), "")


def _render_image(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    """Never an <img>: external images are not loaded by themselves; the reader may open one as a link."""
    token = tokens[idx]
    label = f"image: {token.content.strip(ASCII_SPACE) or 'untitled'}"
    url = safe_url(token.attrGet("src"))
    if not url or url.lower().startswith("mailto:") or token.meta.get("in_link"):
        return f'<span class="md-image md-link-removed">{_escape(label)}</span>'
    return (
        f'<a class="md-image" href="{_escape(url)}" target="_blank" rel="{LINK_REL}" title="{_escape(url)}">'
        f"{_escape(label)} (click to open)</a>"
    )


def _render_hardbreak(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    # markdown-it writes "<br>\n": in a paragraph, which keeps its line breaks (white-space: pre-line, as in the
    # app), that "\n" would be a second break.
    return "<br>"


def _render_task_box(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    checked = " checked" if tokens[idx].meta.get("checked") else ""
    return f'<input type="checkbox" disabled{checked}>'


def _render_table_open(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    return '<div class="md-table"><table>\n'


def _render_table_close(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    return "</table></div>\n"


def _render_html_as_text(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    # Raw HTML is off, so markdown-it makes no such tokens; were one to appear, it is still only text.
    return _escape(tokens[idx].content)


def _make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "xhtmlOut": False})
    md.enable(["table", "strikethrough"])
    md.disable(["entity", "reference"])  # `&lt;` stays the text "&lt;"; references: see the docstring
    # Every link target reaches the core rule, which keeps the safe ones and turns the others into words.
    md.validateLink = lambda url: True
    md.core.ruler.push("agentweb_sanitise", _sanitise)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("code_block", _render_code_block)
    md.add_render_rule("image", _render_image)
    md.add_render_rule("hardbreak", _render_hardbreak)
    md.add_render_rule("md_task_box", _render_task_box)
    md.add_render_rule("table_open", _render_table_open)
    md.add_render_rule("table_close", _render_table_close)
    md.add_render_rule("html_block", _render_html_as_text)
    md.add_render_rule("html_inline", _render_html_as_text)
    return md


_PARSER = _make_parser()


def render_markdown(text: str) -> str:
    """Markdown source → HTML that is safe to include in a page without further escaping."""
    return _PARSER.render((text or "").replace("\ufeff", ""))
