// Regenerate the last answer and edit-and-resend the last user message (frames run.regenerate and
// message.edit_last), and applying the server's `thread.rewound` event to the view.

import { el, button } from "./dom.js";

const key = (id) => String(id);

/** Applies `thread.rewound`: the removed messages leave the view, the last user message gets its (new) text. */
export function applyRewound(view, ev) {
  for (const id of Array.isArray(ev.removed) ? ev.removed : []) {
    const message = view.messages.get(key(id));
    if (message) view.remove(message);
    for (const [callId, card] of view.toolCards) if (!card.root?.isConnected) view.toolCards.delete(callId);
  }
  const last = ev.message !== null && ev.message !== undefined ? view.messages.get(key(ev.message)) : null;
  if (last && typeof ev.content === "string") last.setText(ev.content);
  view.notices.clear();
}

export class TurnControls {
  /**
   * @param {object} opts
   * @param {HTMLElement} opts.container  #messages
   * @param {() => boolean} opts.onRegenerate     returns false when the frame could not be sent
   * @param {(content: string) => boolean} opts.onEditLast
   */
  constructor({ container, onRegenerate, onEditLast }) {
    Object.assign(this, { container, onRegenerate, onEditLast });
    this.busy = true;
    this.editing = null;
  }

  /** Shows the buttons on the last turn when nothing is running; call after every change of the view. */
  update(busy) {
    this.busy = busy;
    for (const node of this.container.querySelectorAll(".turn-actions")) {
      if (!this.editing || !this.editing.contains(node)) node.remove();
    }
    if (busy) {
      if (this.editing) this.cancelEdit();
      return;
    }
    if (this.editing) return;
    const messages = [...this.container.querySelectorAll(":scope > .message")];
    let lastUser = -1;
    messages.forEach((m, i) => { if (m.classList.contains("user")) lastUser = i; });
    if (lastUser < 0 || !messages[lastUser].dataset.messageId) return;
    const user = messages[lastUser];
    const answers = messages.slice(lastUser + 1).filter((m) => m.classList.contains("assistant"));
    const editBar = el("div", "turn-actions");
    editBar.append(button("Edit", "button subtle turn-edit", () => this.startEdit(user)));
    user.append(editBar);
    if (answers.length) {
      const bar = el("div", "turn-actions");
      bar.append(button("Regenerate", "button subtle turn-regenerate", () => {
        if (this.onRegenerate()) this.update(true);
      }));
      answers[answers.length - 1].append(bar);
    }
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
      if (this.onEditLast(content)) {
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
