// One answer per turn: the assistant messages between two user messages (one per model call: text, tool cards,
// more text…) shown as one element. Each message stays its own segment (message-view.js MessageView, with its
// data-message-id, status, notes and cards); the answer adds one header, one Copy for the whole turn's text and
// one usage line summing its model calls, in an actions row at its foot (.answer-actions) where other turn actions
// (Regenerate, a version switcher) belong too.

import { el } from "./dom.js";
import { _ } from "./i18n.js";
import { iconButton } from "./icons.js";
import { answerUsage } from "./usage.js";

const views = new WeakMap(); // answer element → AnswerView

/** The AnswerView whose element this is, or null. */
export function answerOf(element) {
  return (element && views.get(element)) || null;
}

/**
 * Puts `text` on the clipboard: the Clipboard API where the page may use it (https, localhost), else the older
 * copy command on a selected, off-screen text area. Resolves to whether it worked.
 */
export async function copyToClipboard(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // refused (no permission, the page not focused): try the copy command below
    }
  }
  const area = el("textarea", "clipboard-scratch");
  area.value = text;
  area.setAttribute("readonly", "");
  area.setAttribute("aria-hidden", "true");
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand("copy");
  } catch {
    copied = false;
  }
  area.remove();
  return copied;
}

export class AnswerView {
  constructor({ isDemo = false } = {}) {
    this.root = el("article", "message assistant answer");
    this.root.dataset.status = "complete";
    views.set(this.root, this);
    const meta = el("div", "message-meta");
    meta.append(el("span", "message-role", _("Assistant")));
    if (isDemo) {
      const badge = el("span", "badge demo-badge", _("demo"));
      badge.title = _("Written by the offline demo model, not an AI");
      meta.append(badge);
    }
    this.body = el("div", "answer-body");
    this.actions = el("div", "answer-actions");
    this.copyButton = iconButton("copy", _("Copy"), "button subtle small answer-copy", () => this.copy(),
      _("Copy the answer's text (Markdown; tool calls left out)"));
    this.copyButton.setAttribute("aria-label", _("Copy the answer"));
    this.usageEl = null;
    this.actions.append(this.copyButton);
    this.root.append(meta, this.body, this.actions);
    /** @type {import("./message-view.js").MessageView[]} in the conversation's order */
    this.segments = [];
    this.changed();
  }

  /** Adds a message (a model call) at the end of the answer, or before the first one (`first`: older ones). */
  add(segment, { first = false } = {}) {
    segment.answer = this;
    if (first) {
      this.segments.unshift(segment);
      this.body.prepend(segment.root);
    } else {
      this.segments.push(segment);
      this.body.append(segment.root);
    }
    this.changed();
    if (segment.usage) this.showUsage();
  }

  /** Takes a message out; true when the answer is left empty (the caller removes it). */
  remove(segment) {
    this.segments = this.segments.filter((s) => s !== segment);
    segment.root.remove();
    segment.answer = null;
    this.changed();
    this.showUsage();
    return this.segments.length === 0;
  }

  get streaming() {
    return this.segments.some((s) => s.streaming);
  }

  /**
   * After a segment's status or text changed: the answer's status (streaming while any part streams, else its last
   * part's) and whether Copy has anything to copy.
   */
  changed() {
    const last = this.segments[this.segments.length - 1];
    const status = this.streaming ? "streaming" : (last?.root.dataset.status || "complete");
    if (this.root.dataset.status !== status) this.root.dataset.status = status;
    const copyable = status !== "streaming" && this.segments.some((s) => s.length > 0);
    if (this.copyButton.hidden === copyable) this.copyButton.hidden = !copyable;
    this.actions.hidden = !copyable && !this.usageEl;
  }

  /** The whole turn's text: each model call's text (its Markdown source) in order, joined by a blank line. */
  text() {
    return this.segments.map((s) => s.sourceText().trim()).filter(Boolean).join("\n\n");
  }

  async copy() {
    const copied = await copyToClipboard(this.text());
    const node = this.copyButton;
    // The icon stays; its words say what happened (read out, and shown beside the icon while it says so).
    const label = node.querySelector(".icon-only-label");
    label.textContent = copied ? _("Copied") : _("Copy failed");
    node.setAttribute("aria-label", label.textContent);
    node.dataset.copied = copied ? "true" : "false";
    clearTimeout(this.copyTimer);
    this.copyTimer = setTimeout(() => {
      label.textContent = _("Copy");
      node.setAttribute("aria-label", _("Copy the answer"));
      delete node.dataset.copied;
    }, 2000);
  }

  /** The usage line: the sum of the model calls' usage (usage.js), after Copy. */
  showUsage() {
    const line = answerUsage(this.segments.map((s) => s.usage).filter(Boolean));
    if (this.usageEl) this.usageEl.replaceWith(...(line ? [line] : []));
    else if (line) this.actions.append(line);
    this.usageEl = line;
    this.changed();
  }
}
