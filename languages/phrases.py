"""A message with values in it that can still be said in the reader's language when it is sent.

The run layer raises its refusals in English, with no idea who will read them; the chat socket knows the page's
language (languages/sockets.py). A `Phrase` is the English text (a `str`, so logs, the API and tests read it as
before) that also keeps its marked template and its values: `said_in` translates the template, then puts the
values in, numbers written the language's way ("12,345" in English, "12.345" in German)."""

from __future__ import annotations

from typing import Any

from django.utils import formats, translation
from django.utils.functional import Promise

#: The language a Phrase's own text (its `str`) is written in: the catalogues' source language.
SOURCE_LANGUAGE = "en"


class Phrase(str):
    """`template` % `values`. `template`: a string marked with gettext_noop, or, for a sentence that depends on a
    count, `ngettext_lazy(singular, plural, "<key>")` with `plural_by="<key>"` (that value is left unformatted, so
    the plural is chosen by the number itself)."""

    template: str | Promise
    values: dict[str, Any]
    plural_by: str | None

    def __new__(cls, template: str | Promise, *, plural_by: str | None = None, **values: Any) -> Phrase:
        with translation.override(SOURCE_LANGUAGE):
            english = _render(template, values, plural_by)
        phrase = super().__new__(cls, english)
        phrase.template, phrase.values, phrase.plural_by = template, values, plural_by
        return phrase

    def said(self) -> str:
        """The phrase in the active language."""
        return _render(self.template, self.values, self.plural_by)

    def as_data(self) -> dict[str, Any] | None:
        """What another process needs to say it again (JSON: the channel layer), or None when it cannot be sent
        so (a counted template, or values that are not plain)."""
        plain = all(
            isinstance(value, (str, int, float)) and not isinstance(value, Phrase) for value in self.values.values()
        )
        if not isinstance(self.template, str) or not plain:
            return None
        return {"template": str(self.template), "values": dict(self.values)}

    @classmethod
    def from_data(cls, data: Any, english: str) -> str:
        """The phrase `as_data` described, or `english` as it is when `data` is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("template"), str):
            return english
        try:
            return cls(data["template"], **(data.get("values") or {}))
        except (KeyError, TypeError, ValueError):
            return english


def _render(template: str | Promise, values: dict[str, Any], plural_by: str | None) -> str:
    shown = {key: value if key == plural_by else _shown(value) for key, value in values.items()}
    if isinstance(template, str):
        text = translation.gettext(template)
        return text % shown if values else text
    return str(template % shown)  # ngettext_lazy with a count's key: the plural for that count


def _shown(value: Any) -> Any:
    if isinstance(value, Phrase):
        return value.said()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return formats.number_format(value, force_grouping=True)
    return value
