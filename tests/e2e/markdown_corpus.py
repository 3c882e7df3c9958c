"""Markdown that the browser's renderer (static/chat/markdown.js) and the server's (sharing/markdown.py) must render
alike: CommonMark-ish constructs, the GFM extensions the app supports, and hostile input. Used by
tests/e2e/test_markdown_parity.py."""

import random

HEADINGS = [
    "# One\n\n## Two\n\n### Three\n\n#### Four\n\n##### Five\n\n###### Six",
    "####### seven is a paragraph",
    "#no space is a paragraph",
    "# closing hashes ##",
    "   ### indented three spaces",
    "# *emphasis* and `code` in a heading",
    "Setext one\n===",
    "Setext two\n---",
    "Two lines\nof setext\n===",
    "#",
]

PARAGRAPHS = [
    "one line",
    "a\nb\nc",
    "hard  \nbreak with spaces",
    "hard\\\nbreak with a backslash",
    "trailing spaces at the end   ",
    "\n\n\nleading blank lines",
    "a\n\n\n\nb",
    "   indented paragraph\n  continued",
    "",
    " ",
    "\n",
    "a\tb\twith tabs",
]

EMPHASIS = [
    "*a* _b_ **c** __d__ ***e*** ~~f~~ ~g~",
    "snake_case_word and __init__",
    "*a **b** c*",
    "**unclosed strong",
    "a*b*c and 2*3*4",
    "_a_b and a_b_",
    "**a* and *a**",
    "***strong em*** and ___both___",
    "~~~ not a fence ~~~ inline",
    "~~del *em* del~~",
    "* not a list item *",
    "**bold**text and text**bold**",
    "a **«b»** c and a **“b”**c",
    "*(a)* and **[b]**",
]

CODE = [
    "`code` and ``a ` b`` and ` a ` and `  `",
    "`unclosed code",
    "```\nfenced\n```",
    "```python title=x.py\nprint('hi')\n```",
    "~~~\ntilde fence\n~~~",
    "```\nunclosed fence\n\nstill code",
    "    indented\n    code\n\n    more",
    "````\n```\nnested fence\n```\n````",
    "```js\n<script>alert(1)</script>\n```",
    "  ```\n  indented fence\n   more\n  ```",
    "```\n\n\nblank lines inside\n\n```",
    "```a`b\nnot a fence\n```",
    '```py"><script>x\ncode\n```',
    "```\n```",
    "```   \nempty info\n```",
    "``` c++ \nint x;\n```",
    "paragraph\n```\nfence interrupts\n```",
    "paragraph\n    not code (lazy)",
]

QUOTES = [
    "> a\n> b",
    "> a\nlazy continuation",
    "> # heading\n> - list\n> - items",
    ">> nested\n> back",
    "> ```\n> code in quote\n> ```",
    "> a\n\n> b",
    ">no space",
    "> quote\n---",
]

LISTS = [
    "- a\n- b\n- c",
    "* a\n+ b\n- c",
    "1. a\n2. b\n3. c",
    "3. three\n4. four",
    "1) paren\n2) list",
    "- a\n\n- b",
    "1. a\n\n2. b\n\n3. c",
    "- a\n  - b\n    - c\n- d\n\nafter",
    "- a\n\n  second paragraph\n- b",
    "- [ ] todo\n- [x] done\n- [X] Done",
    "1. [x] an ordered task\n2. [ ] another",
    "- [ ]\n- [x]no space\n- [y] not a task\n- [ ]  two spaces",
    "- a\n- b\n\n\ntext after",
    "10. ten\n11. eleven",
    "- ```\n  code in a list\n  ```",
    "- > quote in a list",
    "-\n  empty first line",
    "1. a\n\n   b\n2. c",
    "- a\nlazy continuation",
    "123456789. big number",
    "1234567890. too big",
    "- # heading in a list",
    "- a\n * b\n  * c",
    "- a\n    - four spaces",
    "- a\n\t- tab",
    "text\n- list interrupts a paragraph",
    "text\n2. does not interrupt",
    "- [link](https://e.example/) item\n- **bold** item",
    "- a\n  | x | y |\n  |---|---|\n  | 1 | 2 |",
    "- a\n\n      indented code in a list",
]

BREAKS = [
    "---",
    "***\n___",
    "- - -\n* * *",
    " ***",
    "a\n***\nb",
    "----------",
]

TABLES = [
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "| left | center | right | none |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |",
    "a | b\n--|--\n1 | 2",
    "| a |\n|---|",
    "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |",
    "| a | b |\n|---|\n| 1 | 2 |",
    "| `a\\|b` | c \\| d |\n|---|---|\n| `x|y` | **z** |",
    "| a |\n|---|\n| <script>alert(1)</script> |",
    "| a | b |\n|---|---|\n| 1 | 2 |\nafter the table\n\npara",
    "text\n| a | b |\n|---|---|\n| 1 | 2 |",
    "| [link](https://e.example/) | ![img](https://e.example/i.png) |\n|---|---|\n| https://e.example/bare | x |",
    "|a|\n|-|\n|b|\n\n> quote",
]

LINKS = [
    "[docs](https://e.example/docs)",
    "[docs](https://e.example/docs \"The title\") and [t](https://e.example/ 'single')",
    "[spaces](<https://e.example/a b>)",
    "[mail](mailto:ada@example.com)",
    "[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](data:text/html,x) [d](vbscript:x)",
    "[a](java\nscript:alert(1))",
    "[a](javascript&#58;alert(1))",
    "[rel](/relative) [proto](//e.example/x) [nohost](https:no-host) [empty](https://)",
    "[v6](http://[::1]/) [port](https://e.example:8443/x)",
    "[idn](https://exämple.example/ü?q=ä#frag)",
    "[**bold** `code` link](https://e.example/)",
    "[a [nested](https://x.example/)](https://y.example/)",
    "[<https://a.example/>](https://b.example/)",
    "[a](https://e.example/a_(b))",
    "[empty]() and [](https://e.example/)",
    "[a](https://e.example/%20x) and [b](https://e.example/\\(c)",
    "[ftp](ftp://e.example/) [file](file:///etc/passwd)",
    "[creds](https://user:pass@e.example/)",
    "[unclosed](https://e.example/",
    "[a]\n(https://e.example/)",
]

AUTOLINKS = [
    "<https://e.example/path?q=1>",
    "<mailto:ada@example.com> and <ada@example.com>",
    "<javascript:alert(1)> and <ftp://e.example/> and <data:text/html,x>",
    "<HTTPS://E.EXAMPLE/X>",
    "<https://e.example/a b>",
]

BARE_URLS = [
    "see https://e.example/docs.",
    "(https://e.example/a) and https://e.example/a_(b)).",
    "xhttps://e.example/ and /https://e.example/ and _https://e.example/",
    "HTTPS://E.EXAMPLE/X and HtTp://e.example",
    "http:// and https://a and http://a.",
    "https://e.example/<script>",
    "`https://in.code/` and ```https://x.example/```",
    "[https://e.example/](https://f.example/)",
    "**https://e.example/bold** and *https://e.example/em*",
    "https://e.example/*star* https://e.example/~tilde~",
    "a https://e.example/path,with,commas, b",
    "https://e.example/'quote' and \"https://e.example/\"",
    "https://e.example/x?a=1&b=2#frag",
    "https://exämple.example/ünï",
    "https://" + "a" * 2100 + ".example/",
    "http://?x and https://@/ and https://:80/",
    "tab\thttps://e.example/\tafter",
    "https://e.example/a\\_b and https://e.example/a\\*",
]

IMAGES = [
    "![a cat](https://e.example/cat.png)",
    "![](https://e.example/x.png)",
    "![x](data:image/png;base64,AAAA) ![y](x.png) ![z](javascript:alert(1)) ![m](mailto:a@b.c)",
    "[![logo](https://e.example/logo.png)](https://e.example/)",
    '![*alt* `text`](https://e.example/x.png "title")',
    "![   ](https://e.example/x.png)",
    "![nested [brackets]](https://e.example/x.png)",
    "![a](<https://e.example/a b.png>)",
]

RAW_HTML = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "text <b>bold</b> <i onmouseover=alert(1)>i</i>",
    "<div>\n*markdown inside*\n</div>",
    "<!-- a comment -->",
    "<?php echo 1; ?>",
    "<![CDATA[x]]>",
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">raw link</a>',
    "<iframe src=https://e.example/></iframe>",
    "<style>body{display:none}</style>",
    "</p></div></li></ul></table>",
    "<p>\n\nunclosed",
    "<textarea><b>x</b>",
    "<plaintext>everything after",
    "<xmp><b>x</b></xmp>",
]

ENTITIES_AND_ESCAPES = [
    "&lt;b&gt; &amp; &copy; &#169; &#x41; &nbsp; &bogus;",
    "\\*not em\\* \\# \\[not link\\](x) \\`not code\\`",
    "\\\\ and \\a and \\",
    "\\<script>",
    "\\- not a list\n\\# not a heading",
    "a\\\\\nb",
]

REFERENCES = [
    "[a][b]\n\n[b]: https://e.example/",
    "[b]\n\n[b]: javascript:alert(1)",
    "[b]: https://e.example/ 'title'",
]

UNICODE = [
    "Ünïcödé *ëmphasis* and **стронг**",
    "日本語の**強調**です",
    "a\u00a0*b*\u00a0c",
    "\u200b**zero width**\u200b",
    "emoji 👍 *ok* 👍",
    "😀**a**😀 and **😀** and *😀*",
    "\u202eright to left override",
    "a\u0000b null",
    "\ufeffbyte order mark",
    "\u2028line separator\u2029",
    "𝒜 *𝒷* **𝒸**",
    "fancy\u3000ideographic *space*",
]

NEWLINES = [
    "a\r\nb\r\n\r\nc",
    "a\rb\r\rc",
    "# h\r\n- a\r\n- b",
    "```\r\ncode\r\n```",
]

DEEP = [
    ">" * 60 + " deep quote",
    "".join(" " * (2 * n) + "- item\n" for n in range(40)),
    "*" * 120,
    "[" * 120 + "x" + "]" * 120,
    "`" * 60,
    "*a " * 300,
    "**a _b ~~c `d` e~~ f_ g**" * 20,
    "[a](" * 50,
    "<" * 100 + ">" * 100,
    "\\" * 101,
    "| " * 80 + "|\n" + "|-" * 80 + "|\n" + "| x " * 80 + "|",
]

MIXED = [
    """# Release notes

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

See [the docs](https://example.com/docs) for more.""",
    """Here is the plan:

1. **Read** the file:
   ```bash
   cat README.md
   ```
2. Edit it — see https://e.example/guide.
3. Done ✅

> **Note**
> Keep a backup.

---

| Step | Time |
|------|-----:|
| 1 | 5 s |""",
    """Title
=====

Text with a footnote[^1] and a ~~mistake~~.

[^1]: Not supported, shown as text.

* [x] tests
* [ ] docs""",
]

# Where markdown-it 14.1.0 and markdown-it-py 4.3.0 part ways, or the streaming driver once split a block wrongly.
FOUND = [
    "[`a` `",
    "x ![[https://e.example/```a```",
    "`   ` and `  a  `",
    "😀_a_ and _a 😀_b_ and __😀_b_",
    "a*😀* and *😀*a and **«😀»**",
    "[v6](mailto:a@[::1]) and http://[::1]/x and [ip](http://%5B::1%5D/)",
    "2) ~~~> |---|\n    code in an unclosed fence in a list item\n\nafter the list\r\n> ===",
    "~~~http `backtick` info\ncode\n\nstill code\n~~~\n\nafter",
    "para\n- list under a paragraph\n\n- loose item",
    "```\ncode\n```\t\n\nstill code: a tab after a closing fence\n```",
]

CORPUS = [
    *HEADINGS,
    *PARAGRAPHS,
    *EMPHASIS,
    *CODE,
    *QUOTES,
    *LISTS,
    *BREAKS,
    *TABLES,
    *LINKS,
    *AUTOLINKS,
    *BARE_URLS,
    *IMAGES,
    *RAW_HTML,
    *ENTITIES_AND_ESCAPES,
    *REFERENCES,
    *UNICODE,
    *NEWLINES,
    *DEEP,
    *MIXED,
    *FOUND,
]

# Pieces of Markdown syntax, markup and URLs that random texts are made of.
FRAGMENTS = [
    "<script>",
    "</script>",
    "<img src=x onerror=alert(1)>",
    "<a href='javascript:alert(1)'>",
    "javascript:",
    "JAVASCRIPT:",
    "data:",
    "mailto:",
    "http://",
    "https://e.example/",
    "https://e.example/a_(b)",
    "&#106;",
    "&lt;",
    '"',
    "'",
    "`",
    "``",
    "```",
    "~~~",
    "[",
    "]",
    "(",
    ")",
    "](",
    "![",
    "<",
    ">",
    "> ",
    "\\",
    "*",
    "**",
    "_",
    "__",
    "~~",
    "|",
    "|---|",
    "| :-: |",
    "-",
    "- ",
    "---",
    "#",
    "# ",
    "1. ",
    "2) ",
    "[ ] ",
    "[x] ",
    " ",
    "  ",
    "    ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "word",
    "x",
    "é",
    "😀",
    ".",
    ",",
    ":",
    "=",
    "===",
]


def random_texts(count: int, seed: int) -> list[str]:
    """`count` texts of up to 40 fragments each, the same ones on every run (seeded)."""
    rng = random.Random(seed)
    return ["".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 40))) for _ in range(count)]
