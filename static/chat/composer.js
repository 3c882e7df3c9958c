// The composer (textarea, Send, Stop, a short-lived error line) and the sidebar's thread list.

import { threadListItem } from "./render.js";

const ERROR_VISIBLE_MS = 6000;
const MAX_INPUT_HEIGHT_PX = 240;

export class Composer {
  /**
   * @param {object} opts
   * @param {HTMLFormElement} opts.form
   * @param {HTMLTextAreaElement} opts.input
   * @param {HTMLButtonElement} opts.sendButton
   * @param {HTMLButtonElement} opts.stopButton
   * @param {HTMLElement} opts.errorEl
   * @param {(text: string) => boolean} opts.onSubmit  returns true when the text was sent (the input is then cleared)
   * @param {() => void} opts.onStop
   * @param {() => boolean} [opts.hasFiles]  files are attached: a message may then be sent without text
   */
  constructor({ form, input, sendButton, stopButton, errorEl, onSubmit, onStop, hasFiles = () => false }) {
    Object.assign(this, { form, input, sendButton, stopButton, errorEl, onSubmit, onStop, hasFiles });
    this.busy = false;
    this.errorTimer = null;
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit();
    });
    input.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" || e.shiftKey || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.isComposing || e.keyCode === 229) return; // an input method is composing a character
      e.preventDefault();
      this.submit();
    });
    input.addEventListener("input", () => this.autosize());
    this.autosize();
    stopButton.addEventListener("click", () => this.onStop());
  }

  submit() {
    const text = this.input.value.trim();
    if (!text && !this.hasFiles()) return;
    if (this.onSubmit(text)) {
      this.input.value = "";
      this.autosize();
    }
  }

  /** Grows the textarea with its content, up to a limit. */
  autosize() {
    const input = this.input;
    input.style.height = "auto";
    const borders = input.offsetHeight - input.clientHeight;
    const wanted = input.scrollHeight + borders;
    input.style.height = `${Math.min(wanted, MAX_INPUT_HEIGHT_PX)}px`;
    input.classList.toggle("scrolls", wanted > MAX_INPUT_HEIGHT_PX);
  }

  /** While busy Send is disabled; Stop shows when a run can be stopped. */
  setBusy(busy, canStop) {
    this.busy = busy;
    this.sendButton.disabled = busy;
    this.form.classList.toggle("busy", busy);
    this.form.setAttribute("aria-busy", busy ? "true" : "false");
    this.stopButton.hidden = !canStop;
    this.stopButton.disabled = false;
  }

  /** Puts refused text back, unless the person already typed something new. */
  restore(text) {
    if (!this.input.value.trim()) {
      this.input.value = text;
      this.autosize();
    }
  }

  showError(message) {
    clearTimeout(this.errorTimer);
    this.errorEl.textContent = message;
    this.errorEl.hidden = false;
    this.errorTimer = setTimeout(() => {
      this.errorEl.hidden = true;
      this.errorEl.textContent = "";
    }, ERROR_VISIBLE_MS);
  }

  focus() {
    this.input.focus();
  }
}

export class Sidebar {
  /**
   * @param {HTMLElement} root       #sidebar
   * @param {HTMLElement} list       #thread-list
   * @param {HTMLElement|null} toggle #sidebar-toggle (shown on narrow screens)
   * @param {(id: string) => string} hrefFor
   */
  constructor(root, list, toggle, hrefFor) {
    this.root = root;
    this.list = list;
    this.hrefFor = hrefFor;
    if (toggle) {
      toggle.addEventListener("click", () => {
        const open = !root.classList.contains("open");
        root.classList.toggle("open", open);
        toggle.setAttribute("aria-expanded", open ? "true" : "false");
      });
    }
  }

  item(id) {
    for (const li of this.list.children) if (li.dataset.threadId === String(id)) return li;
    return null;
  }

  /** Adds a thread at the top (or moves it there); `current` marks it as the open one. */
  add(id, title, current = false) {
    let li = this.item(id);
    if (!li) li = threadListItem({ id, title, href: this.hrefFor(id) });
    else if (title) this.setTitle(id, title);
    this.list.prepend(li);
    this.list.hidden = false;
    const empty = this.root.querySelector(".thread-list-empty");
    if (empty) empty.remove();
    if (current) this.markCurrent(id);
  }

  moveToTop(id) {
    const li = this.item(id);
    if (li) this.list.prepend(li);
  }

  remove(id) {
    this.item(id)?.remove();
    if (!this.list.children.length) this.list.hidden = true;
  }

  setTitle(id, title) {
    const link = this.item(id)?.querySelector(".thread-title");
    if (link && title) link.textContent = title;
  }

  markCurrent(id) {
    for (const link of this.list.querySelectorAll(".thread-link")) {
      const isCurrent = link.parentElement.dataset.threadId === String(id);
      if (isCurrent) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }
}
