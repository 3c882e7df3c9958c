/**
 * The page's strings in its language: Django's JavaScript catalogue (/jsi18n/, loaded by base.html before any
 * module) defines window.gettext and friends; without it (a page that did not load it), and for any text it
 * lacks, the English text stands. Every string a person reads is written `_("…")` (or `_f("…", values)`) so that
 * `manage.py update_catalogues` finds it (docs/ui.md, Languages); a value goes in through a placeholder, never
 * by joining pieces, since word order differs between languages.
 */

/** The translation of `text`, or `text` itself. */
export const _ = (text) => (typeof window.gettext === "function" ? window.gettext(text) : text);

/** The singular or plural translation for `count`. */
export const ngettext = (singular, plural, count) =>
  typeof window.ngettext === "function" ? window.ngettext(singular, plural, count) : count === 1 ? singular : plural;

/** `text` with its %(name)s placeholders filled from `values` (a placeholder without a value stays as it is). */
export function format(text, values) {
  return text.replace(/%\((\w+)\)s/g, (whole, key) => (key in values ? String(values[key]) : whole));
}

/** `text` translated, then its %(name)s placeholders filled from `values`. */
export const _f = (text, values) => format(_(text), values);

/** The page's language (<html lang>, from the server), for Intl's dates and numbers. */
export const locale = () => document.documentElement.lang || "en";

/** A number as the page's language writes it (1,234.5 · 1.234,5 · 1 234,5). */
export const formatNumber = (n, options) => Number(n).toLocaleString(locale(), options);
