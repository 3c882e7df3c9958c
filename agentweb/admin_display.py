"""Small helpers shared by the app's admin pages.

Django shows a boolean column as a green ✔ or a red ✖. Where False is the normal, fine case (a tool the code still
defines, a token count the server sent) a red ✖ on every row reads as an error: such columns use `flag` instead,
which shows a word only where the row is out of the ordinary and the admin's neutral dash where it is fine.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin
from django.utils.html import format_html


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
