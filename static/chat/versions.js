// Versions of the conversation (docs/ui.md, "Edit, regenerate and versions"): Edit on every user message, Regenerate
// on the last answer, and a ‹ 2 / 3 › switcher on a message that has versions (frames message.edit, run.regenerate,
// message.switch_version); and applying the server's `thread.branch_changed` to the view.
//
// The controls are placed on the message elements found by `data-message-id`, after every change of the view
// (TurnControls.update): nothing here builds or reorders messages except through the ThreadView.

import { el, button } from "./dom.js";
import { _, _f } from "./i18n.js";
import { iconButton } from "./icons.js";

const key = (id) => String(id);

/**
 * Applies `thread.branch_changed`: the messages that left the view go, the ones shown from the point on are built
 * after what stays (the point is always after it), with their versions; the thread's summary note follows the branch.
 */
export function applyBranchChanged(view, ev, turns) {
  for (const id of Array.isArray(ev.removed) ? ev.removed : []) {
    const message = view.messages.get(key(id));
    if (message) view.remove(message);
    turns.forget(id);
  }
  for (const [callId, card] of view.toolCards) if (!card.root?.isConnected) view.toolCards.delete(callId);
  const shown = Array.isArray(ev.messages) ? ev.messages : [];
  view.appendMessages(shown);
  turns.remember(shown);
  if ("summary" in ev) {
    view.summary?.node.remove();
    view.summary = null;
    if (ev.summary) view.showSummary(ev.summary);
  }
  view.notices.clear();
}

export class TurnControls {
  /**
   * @param {object} opts
   * @param {HTMLElement} opts.container  #messages
   * @param {() => boolean} opts.onRegenerate     each returns false when the frame could not be sent
   * @param {(messageId: number, content: string) => boolean} opts.onEdit
   * @param {(messageId: number, to: number) => boolean} opts.onSwitch
   */
  constructor({ container, onRegenerate, onEdit, onSwitch }) {
    Object.assign(this, { container, onRegenerate, onEdit, onSwitch });
    this.busy = true;
    this.editing = null;
    this.versions = new Map(); // message id → {index, count, ids}
    this.focusAfter = null; // after a switch from the keyboard: {id, which} of the button to focus again
    this.dirty = true; // versions learnt since the controls were last placed
  }

  /** The versions of a snapshot's messages (replacing what was known). */
  reset(messages) {
    this.versions.clear();
    this.focusAfter = null;
    this.remember(messages);
  }

  remember(messages) {
    for (const m of Array.isArray(messages) ? messages : []) {
      if (!m || m.id === undefined || m.id === null) continue;
      const v = m.versions;
      if (v && Array.isArray(v.ids) && v.count > 1) this.versions.set(key(m.id), v);
      else this.versions.delete(key(m.id));
    }
    this.dirty = true;
  }

  forget(id) {
    this.versions.delete(key(id));
    this.dirty = true;
  }

  /** Shows the controls for the view as it is; call after every change of it. `busy`: a run is active (or a send
   * pending): nothing can be edited, regenerated or switched then. */
  update(busy) {
    // While a run streams this is called for every event; the controls change only when versions do.
    if (busy && this.busy && !this.dirty && !this.editing) return;
    this.busy = busy;
    this.dirty = false;
    const focused = document.activeElement?.closest?.(".versions") ? document.activeElement : null;
    const refocus = focused && this.container.contains(focused)
      ? { id: focused.closest(".versions")?.dataset.message,
          which: focused.classList.contains("version-prev") ? "prev" : "next" }
      : null;
    for (const node of this.container.querySelectorAll(".turn-actions")) {
      if (!this.editing || !this.editing.contains(node)) node.remove();
    }
    if (busy && this.editing) {
      this.cancelEdit(); // which shows the controls again
      return;
    }
    if (this.editing) return;
    // A user message's controls go in a row under it; an answer's (answer.js: one element per turn, a segment per
    // model call) in its actions row, beside Copy and the usage line.
    const bars = new Map();
    const bar = (article) => {
      if (!bars.has(article)) {
        const row = el(article.classList.contains("answer") ? "span" : "div", "turn-actions");
        bars.set(article, row);
      }
      return bars.get(article);
    };
    for (const node of this.container.querySelectorAll(".message.user[data-message-id], .answer [data-message-id]")) {
      const article = node.closest(".message");
      const versions = this.versions.get(node.dataset.messageId);
      if (versions) bar(article).append(this.switcher(node.dataset.messageId, versions));
      if (!busy && node === article) {
        bar(article).append(iconButton("edit", _("Edit"), "button subtle turn-edit", () => this.startEdit(article),
          _("Edit this message and send it again")));
      }
    }
    const all = [...this.container.querySelectorAll(":scope > .message")];
    const lastUser = all.findLastIndex((m) => m.classList.contains("user"));
    const answers = lastUser < 0 ? [] : all.slice(lastUser + 1).filter((m) => m.classList.contains("assistant"));
    if (!busy && answers.length && all[lastUser].dataset.messageId) {
      bar(answers[answers.length - 1]).append(iconButton("regenerate", _("Regenerate"), "button subtle turn-regenerate", () => {
        if (this.onRegenerate()) this.update(true);
      }, _("Ask again (this answer is kept as a version)")));
    }
    for (const [article, node] of bars) {
      const actions = article.classList.contains("answer") ? article.querySelector(":scope > .answer-actions") : null;
      if (actions) actions.prepend(node);
      else article.append(node);
    }
    this.restoreFocus(refocus);
  }

  /** ‹ index / count ›: two buttons, disabled at the ends and while busy; reachable with Tab, used with Enter. */
  switcher(messageId, { index, count, ids }) {
    const group = el("div", "versions");
    group.dataset.message = key(messageId);
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", _f("Version %(index)s of %(count)s", { index, count }));
    const go = (to, which) => {
      if (this.busy || to === undefined) return;
      this.focusAfter = { id: key(to), which };
      if (this.onSwitch(Number(messageId), to)) this.update(true);
    };
    const prev = button("‹", "button subtle version-prev", () => go(ids[index - 2], "prev"));
    prev.setAttribute("aria-label", _("Previous version"));
    prev.title = _("Previous version");
    prev.disabled = this.busy || index <= 1;
    const next = button("›", "button subtle version-next", () => go(ids[index], "next"));
    next.setAttribute("aria-label", _("Next version"));
    next.title = _("Next version");
    next.disabled = this.busy || index >= count;
    group.append(prev, el("span", "version-count", `${index} / ${count}`), next);
    return group;
  }

  /** Keeps the keyboard where it was: on the switcher that was used (now on the version it showed), or the one a
   * focused button was on before the controls were rebuilt. The other button when that one is now disabled. */
  restoreFocus(refocus) {
    const wanted = this.focusAfter || refocus;
    if (!wanted || !wanted.id) return;
    const group = this.container.querySelector(`.versions[data-message="${CSS.escape(wanted.id)}"]`);
    if (!group) return; // the version asked for is not shown yet: tried again at the next update
    this.focusAfter = null;
    const order = wanted.which === "prev" ? [".version-prev", ".version-next"] : [".version-next", ".version-prev"];
    order.map((selector) => group.querySelector(selector)).find((b) => b && !b.disabled)?.focus();
  }

  startEdit(article) {
    const textEl = article.querySelector(".message-text");
    const form = el("form", "turn-edit-form");
    const input = el("textarea", "turn-edit-input");
    input.value = textEl ? textEl.textContent : "";
    input.rows = Math.min(10, Math.max(2, input.value.split("\n").length));
    input.setAttribute("aria-label", "Edit your message");
    const row = el("div", "turn-edit-buttons");
    row.append(
      button("Cancel", "button subtle turn-edit-cancel", () => this.cancelEdit()),
      Object.assign(el("button", "button primary turn-edit-send", "Save and send"), { type: "submit" }),
    );
    form.append(input, row);
    for (const node of article.querySelectorAll(".turn-actions")) node.remove();
    if (textEl) textEl.hidden = true;
    article.append(form);
    this.editing = article;
    input.focus();
    input.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { e.preventDefault(); this.cancelEdit(); }
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
    });
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const content = input.value.trim();
      if (!content) return;
      if (this.onEdit(Number(article.dataset.messageId), content)) {
        this.cancelEdit();
        this.update(true);
      }
    });
  }

  cancelEdit() {
    const article = this.editing;
    this.editing = null;
    if (!article) return;
    article.querySelector(".turn-edit-form")?.remove();
    const textEl = article.querySelector(".message-text");
    if (textEl) textEl.hidden = textEl.textContent.length === 0;
    this.update(this.busy);
  }
}
