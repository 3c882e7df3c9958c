"""Small helpers shared by the app's admin pages.

Django shows a boolean column as a green ✔ or a red ✖. Where False is the normal, fine case (a tool the code still
defines, a token count the server sent) a red ✖ on every row reads as an error: such columns use `flag` instead,
which shows a word only where the row is out of the ordinary and the admin's neutral dash where it is fine.

A cost is written by `money`, wherever the admin shows one.

A list's long values (a chat's title, a server's command, an error) stay on one line: `cut` and `cut_text` show the
value cut with an ellipsis where the column is narrower than it (static/admin-theme/admin.css), the whole of it in
the cell's title, which the browser shows on hover.

Django's admin writes a form field's help text as HTML (it may hold markup). Ours are plain text, some naming a
placeholder in angle brackets (`<server>__<tool>`) that the browser would take for a tag: `PlainHelpTexts` escapes
them on the admin's forms, read-only pages and inlines (the models keep the text as written: other forms escape it
when they render it). tests/agentweb/test_admin_help_texts.py fails for an admin whose model has such a help text
and that does not take the mixin.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.utils.html import escape, format_html
from django.utils.safestring import SafeData

CENT = Decimal("0.01")
MILLIONTH = Decimal("0.000001")  # what a cost is stored to (chat/usage.py cost_of)
#: The most of a value a cut cell's title holds: the whole of any name, URL or error; not a whole document.
TITLE_LIMIT = 2000


def flag(field: str, *, description: str, shown: str, title: str = "") -> Callable:
    """A list column for the boolean `field`: `shown` (in the admin's warning style) where it is True, blank where
    it is False; sortable on the field."""

    @admin.display(description=description, ordering=field)
    def column(self, obj) -> str:
        if not getattr(obj, field):
            return ""
        return format_html('<span class="agentweb-flag" title="{}">{}</span>', title or shown, shown)

    column.__name__ = f"{field}_flag"
    return column


def mark(field: str, *, description: str, shown: str) -> Callable:
    """A list column for the boolean `field` that is a choice, not a problem (the default configuration, say): a
    neutral `shown` where it is True, blank where it is False."""

    @admin.display(description=description, ordering=field)
    def column(self, obj) -> str:
        return shown if getattr(obj, field) else ""

    column.__name__ = f"{field}_mark"
    return column


def cut(attr: str, *, description: str, ordering: str | None = None) -> Callable:
    """A list column for `attr` (a field, or a path through related rows: "thread.title") on one line, cut where
    it is longer than the column, the whole of it on hover."""

    @admin.display(description=description, ordering=ordering)
    def column(self, obj) -> str:
        value = obj
        for part in attr.split("."):
            value = getattr(value, part, None) if value is not None else None
        if callable(value):  # a method: "__str__"
            value = value()
        return cut_text(value, empty=self.get_empty_value_display())

    column.__name__ = f"{attr.replace('.', '_')}_cut"
    return column


def cut_text(value: Any, *, empty: str = "-") -> str:
    """`value` as a cut cell shows it: on one line, cut with an ellipsis by the stylesheet, whole in its title."""
    text = "" if value is None else str(value)
    if not text:
        return empty
    title = text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1] + "…"
    return format_html('<span class="agentweb-cut" title="{}">{}</span>', title, text[:TITLE_LIMIT])


def money(cost: Any) -> str:
    """A cost as an admin reads money, in AGENTWEB_CURRENCY: to the cent from 1 up ($12.30, $1,234.50), below that
    to two significant digits and at least the cent ($0.50, $0.30, $0.0042, $0.000004), as the chat page shows a
    cost; "—" for none. A sum SQLite made in floating point (0.30000000000000004) is rounded the same way. The one way
    the admin writes a cost: its lists, the usage report and its chart, the runs, the model configurations' prices."""
    if cost is None:
        return "—"
    value = Decimal(str(cost))
    sign, value = ("-", -value) if value < 0 else ("", value)
    if value >= 1 or value == 0:
        text = f"{value.quantize(CENT):,f}"
    else:
        step = max(Decimal(10) ** (value.adjusted() - 1), MILLIONTH)
        text = f"{value.quantize(step, ROUND_HALF_UP):f}"
        if step < CENT:
            text = text.rstrip("0")
        text += "0" * max(0, 2 - len(text.partition(".")[2]))
    return f"{sign}{settings.AGENTWEB_CURRENCY}{text}"


class PlainHelpTexts:
    """A ModelAdmin (or inline) mixin: the help texts of its model's fields are shown as written, `<` and `>`
    included, on its forms and on its read-only pages. `help_texts` replaces a model field's help text there (by
    field name)."""

    help_texts: dict[str, str] = {}

    def plain_help_texts(self) -> dict[str, Any]:
        texts = {f.name: f.help_text for f in self.model._meta.get_fields() if getattr(f, "help_text", "")}
        texts.update(self.help_texts)
        return {name: plain_help_text(text) for name, text in texts.items()}

    # Given to the form's Meta (modelform_factory's help_texts): its fields take them, and so do the admin's
    # read-only fields, which read the Meta's help texts before the model's.
    def get_form(self, request, obj=None, change=False, **kwargs: Any):
        kwargs["help_texts"] = {**self.plain_help_texts(), **kwargs.get("help_texts", {})}
        return super().get_form(request, obj, change=change, **kwargs)

    def get_formset(self, request, obj=None, **kwargs: Any):
        kwargs["help_texts"] = {**self.plain_help_texts(), **kwargs.get("help_texts", {})}
        return super().get_formset(request, obj, **kwargs)


def plain_help_text(text: Any) -> Any:
    """`text` escaped for the admin, unless it is already HTML that was marked safe (or empty)."""
    if not text or isinstance(text, SafeData):
        return text
    return escape(text)
