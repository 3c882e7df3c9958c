from tools.html_text import html_to_text


def test_it_drops_scripts_styles_and_other_non_text():
    html = "<p>a</p><script>x()</script><style>p{}</style><noscript>n</noscript><svg><text>s</text></svg><p>b</p>"

    assert html_to_text(html) == "a\n\nb"


def test_it_keeps_the_title_from_the_head_but_nothing_else_there():
    assert html_to_text("<head><title>T</title><meta charset=utf-8></head><body>x</body>") == "T\nx"


def test_it_collapses_whitespace_as_a_browser_does():
    assert html_to_text("<p>one\n   two\t three</p>") == "one two three"


def test_it_keeps_preformatted_text_as_it_is():
    assert html_to_text("<pre>def f():\n    return 1</pre>") == "def f():\n    return 1"


def test_it_marks_headings_and_list_items():
    assert html_to_text("<h2>Steps</h2><ol><li>mix</li><li>bake</li></ol>") == "## Steps\n\n- mix\n- bake"


def test_it_unescapes_entities_and_breaks_lines_at_br():
    assert html_to_text("Fish &amp; chips<br>&eacute;t&eacute;") == "Fish & chips\nété"


def test_it_separates_table_cells():
    assert html_to_text("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>") == "a b\nc"


def test_it_survives_an_unclosed_script():
    assert html_to_text("<p>kept</p><script>never closed") == "kept"
