"""HTML → readable text with the standard library's parser: what a model needs from a page, not its markup.

Scripts, styles and other non-text elements are dropped; block elements become line breaks, list items
"- " lines, headings "#" lines; whitespace collapses as a browser would, except inside <pre>.
"""

import re
from html.parser import HTMLParser

__all__ = ["html_to_text"]

_SKIPPED = {"script", "style", "noscript", "template", "svg", "iframe", "object", "canvas", "head"}
_KEPT_IN_HEAD = {"title"}
_BLOCKS = {
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption", "figure",
    "footer", "form", "header", "hr", "main", "nav", "ol", "p", "pre", "section", "table", "title", "ul",
}  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def html_to_text(html: str) -> str:
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return parser.text()


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0  # inside <script>, <style>, … (nested ones counted)
        self.title_depth = 0  # <title> is the one thing read inside <head>
        self.pre_depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in _KEPT_IN_HEAD:
            self.title_depth += 1
        elif tag in _SKIPPED and tag not in _VOID:
            self.skip_depth += 1
        if tag == "pre":
            self.pre_depth += 1
        if tag in _HEADINGS:
            self.parts.append("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag == "tr":  # a line per row; no blank line between rows
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" ")
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _KEPT_IN_HEAD:
            self.title_depth = max(self.title_depth - 1, 0)
        elif tag in _SKIPPED:
            self.skip_depth = max(self.skip_depth - 1, 0)
        if tag == "pre":
            self.pre_depth = max(self.pre_depth - 1, 0)
        if tag in _BLOCKS or tag in _HEADINGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip_depth and not self.title_depth:
            return
        if self.pre_depth:
            self.parts.append(data.replace("\n", "\x00"))  # protected from the whitespace clean-up below
        else:
            self.parts.append(re.sub(r"\s+", " ", data))

    def text(self) -> str:
        lines = (line.strip() for line in "".join(self.parts).split("\n"))
        text = "\n".join(lines).replace("\x00", "\n")
        return re.sub(r"\n{3,}", "\n\n", text).strip()
