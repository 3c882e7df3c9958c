"""The admin's display helpers: a cost written as money, one way everywhere (agentweb/admin_display.py money), and a
long value cut on one line with the whole of it in the title, escaped."""

from decimal import Decimal

import pytest

from agentweb.admin_display import TITLE_LIMIT, cut_text, money


@pytest.mark.parametrize(
    ("cost", "shown"),
    [
        (Decimal("12.3"), "$12.30"),
        (Decimal("12.345678"), "$12.35"),
        (Decimal("1234.5"), "$1,234.50"),
        (Decimal("0.0042"), "$0.0042"),
        (Decimal("0.003340"), "$0.0033"),  # as the chat page shows an answer's cost
        (Decimal("0.300004"), "$0.30"),
        (Decimal("0.5"), "$0.50"),
        (Decimal("0.000004"), "$0.000004"),
        (Decimal("0"), "$0.00"),
        (0.30000000000000004, "$0.30"),  # a sum SQLite made in floating point
        (None, "—"),
    ],
)
def test_a_cost_reads_as_money(cost, shown):
    assert money(cost) == shown


def test_the_currency_is_the_settings(settings):
    settings.AGENTWEB_CURRENCY = "€"
    assert money(Decimal("2.5")) == "€2.50"
    settings.AGENTWEB_CURRENCY = ""
    assert money(Decimal("0.0042")) == "0.0042"


def test_a_cut_value_keeps_its_whole_text_in_the_title_escaped():
    shown = cut_text('<b>"a long title"</b> ' + "x" * 100)
    assert shown.startswith('<span class="agentweb-cut" title="&lt;b&gt;&quot;a long title&quot;&lt;/b&gt; xxx')
    assert "<b>" not in shown


def test_a_huge_value_is_not_copied_whole_into_the_page():
    shown = cut_text("y" * 50_000)
    assert len(shown) < 3 * TITLE_LIMIT
    assert cut_text("") == "-" and cut_text(None, empty="—") == "—"
