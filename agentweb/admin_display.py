"""Small helpers shared by the app's admin pages.

Django shows a boolean column as a green ✔ or a red ✖. Where False is the normal, fine case (a tool the code still
defines, a token count the server sent) a red ✖ on every row reads as an error: such columns use `flag` instead,
which shows a word only where the row is out of the ordinary and the admin's neutral dash where it is fine.

Django's admin writes a form field's help text as HTML (it may hold markup). Ours are plain text, some naming a
placeholder in angle brackets (`<server>__<tool>`) that the browser would take for a tag: `PlainHelpTexts` escapes
them on the admin's forms (the models keep the text as written: other forms escape it when they render it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.utils.html import escape, format_html
from django.utils.safestring import SafeData


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


class PlainHelpTexts:
    """A ModelAdmin mixin: the help texts of its form's model fields are shown as written, `<` and `>` included.
    `help_texts` replaces a model field's help text on the admin's form (by field name)."""

    help_texts: dict[str, str] = {}

    def formfield_for_dbfield(self, db_field, request, **kwargs: Any):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None:
            field.help_text = plain_help_text(self.help_texts.get(db_field.name, field.help_text))
        return field


def plain_help_text(text: Any) -> Any:
    """`text` escaped for the admin, unless it is already HTML that was marked safe (or empty)."""
    if not text or isinstance(text, SafeData):
        return text
    return escape(text)
