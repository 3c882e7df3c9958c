/**
 * The page's strings in its language: Django's JavaScript catalogue (/jsi18n/, loaded by base.html before any
 * module) defines window.gettext and friends; without it (a page that did not load it) the English text stands.
 * Every string a person reads is written `_("…")` so that `manage.py makemessages -d djangojs` finds it
 * (docs/ui.md, Languages); a value goes in through `format`, never by joining pieces, since word order differs.
 */

/** The translation of `text`, or `text` itself. */
export const _ = (text) => (window.gettext ? window.gettext(text) : text);

/** The singular or plural translation for `count`. */
export const ngettext = (singular, plural, count) =>
  window.ngettext ? window.ngettext(singular, plural, count) : count === 1 ? singular : plural;

/** `text` with its %(name)s placeholders filled from `values` (Django's interpolate, named). */
export function format(text, values) {
  if (window.interpolate) return window.interpolate(text, values, true);
  return text.replace(/%\((\w+)\)s/g, (match, name) => String(values[name]));
}

/** The page's language (<html lang>, from the server), for Intl's dates and numbers. */
export const locale = () => document.documentElement.lang || "en";

/** A number as the page's language writes it (1,234.5 · 1.234,5 · 1 234,5). */
export const formatNumber = (n, options) => Number(n).toLocaleString(locale(), options);
