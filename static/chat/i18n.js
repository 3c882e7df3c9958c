// Words the page writes, wrapped for translation: Django's JavaScript catalogue defines window.gettext when the
// page loads it (the i18n work of issue 41); until then, and for any text it lacks, the text is used as written.
// Every module that writes words for people imports `_` from here, so the catalogue has one place to find them.

export const _ = (text) => (typeof window.gettext === "function" ? window.gettext(text) : text);

/** `format`'s %(name)s placeholders filled from `values`, after translating `format` (Django's interpolate). */
export function _f(format, values) {
  return _(format).replace(/%\((\w+)\)s/g, (whole, key) => (key in values ? String(values[key]) : whole));
}
