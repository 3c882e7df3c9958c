// A structured final answer as a read-only key/value card, and the note of a thread's summary of older turns.
// Built from DOM nodes only: every key and value goes in as text (textContent), never as HTML.

import { el } from "./dom.js";
import { _ } from "./i18n.js";

const MAX_DEPTH = 8;

/** A JSON value as nested DOM: an object as a definition list, an array as a numbered list, a scalar as text. */
export function valueView(value, depth = 0) {
  if (depth >= MAX_DEPTH) return el("code", "structured-scalar", JSON.stringify(value));
  if (Array.isArray(value)) {
    if (!value.length) return el("span", "structured-empty", _("(none)"));
    const list = el("ol", "structured-list");
    for (const item of value) {
      const li = el("li", "structured-item");
      li.append(valueView(item, depth + 1));
      list.append(li);
    }
    return list;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (!entries.length) return el("span", "structured-empty", _("(empty)"));
    const list = el("dl", "structured-object");
    for (const [name, item] of entries) {
      const dd = el("dd", "structured-value");
      dd.append(valueView(item, depth + 1));
      list.append(el("dt", "structured-key", name), dd);
    }
    return list;
  }
  if (value === null) return el("span", "structured-scalar structured-null", "null");
  return el("span", `structured-scalar structured-${typeof value}`, String(value));
}

/** The card under an answer that matched the run's JSON Schema. */
export function structuredCard(value) {
  const card = el("section", "structured-answer");
  card.setAttribute("aria-label", _("Structured answer"));
  card.append(el("h3", "structured-title", _("Structured answer")), valueView(value));
  const raw = el("details", "structured-raw");
  raw.append(el("summary", "", "JSON"), el("pre", "structured-json", JSON.stringify(value, null, 2)));
  card.append(raw);
  return card;
}

/** _("Earlier messages summarised"), the summary expandable (context strategy `summarise`). */
export function summaryNote(summary) {
  const note = el("details", "message-note summary-note");
  note.append(el("summary", "summary-note-title", _("Earlier messages summarised")));
  note.append(el("p", "summary-note-text", typeof summary?.text === "string" ? summary.text : ""));
  return note;
}
