// The model picker's face: a button showing the model, and a list that drops from it (ARIA listbox), in place of
// the bare <select>. The <select id="model-picker"> stays, hidden, as the value ModelPicker reads and sets; this
// mirrors its options and sends it a change event when the person picks.
//
// Keyboard: on the button, Enter / Space / ↓ / ↑ open the list on the current model; in the list, ↑ ↓ Home End
// move, Enter or Space picks, Escape or Tab closes, and focus goes back to the button.

import { el } from "./dom.js";
import { icon } from "./icons.js";

let serial = 0;

export class ListPicker {
  /**
   * @param {HTMLSelectElement} select  the hidden <select> holding the value
   * @param {object} o
   * @param {string} o.label  what the button picks ("Model")
   * @param {(value: string) => string} [o.note]  a second, quieter line for an option (e.g. "offline demo")
   */
  constructor(select, { label, note = () => "" }) {
    Object.assign(this, { select, note });
    const id = `picker-${++serial}`;
    this.root = el("div", "list-picker");
    this.button = el("button", "button subtle list-picker-button");
    this.button.type = "button";
    this.button.id = `${select.id}-button`;
    this.button.setAttribute("aria-haspopup", "listbox");
    this.button.setAttribute("aria-expanded", "false");
    this.current = el("span", "list-picker-current");
    this.labelText = label;
    this.button.append(this.current, icon("chevron"));
    this.list = el("ul", "list-picker-list");
    this.list.id = `${id}-list`;
    this.list.setAttribute("role", "listbox");
    this.list.setAttribute("aria-label", label);
    this.list.tabIndex = -1;
    this.list.hidden = true;
    this.button.setAttribute("aria-controls", this.list.id);
    this.root.append(this.button, this.list);
    select.after(this.root);
    this.button.addEventListener("click", () => (this.list.hidden ? this.open() : this.close(true)));
    this.button.addEventListener("keydown", (e) => {
      if (["ArrowDown", "ArrowUp"].includes(e.key)) {
        e.preventDefault();
        this.open();
      }
    });
    this.list.addEventListener("keydown", (e) => this.key(e));
    this.list.addEventListener("click", (e) => {
      const option = e.target.closest('[role="option"]');
      if (option) this.pick(option);
    });
    document.addEventListener("click", (e) => {
      if (!this.list.hidden && !this.root.contains(e.target)) this.close(false);
    });
    select.addEventListener("change", () => this.sync());
    this.sync();
  }

  /** Rebuilds the list from the select's options and shows its value on the button. */
  sync() {
    this.list.replaceChildren();
    for (const [index, option] of [...this.select.options].entries()) {
      const item = el("li", "list-picker-option");
      item.id = `${this.list.id}-${index}`;
      item.setAttribute("role", "option");
      item.dataset.value = option.value;
      const selected = option.value === this.select.value;
      item.setAttribute("aria-selected", String(selected));
      const text = el("span", "list-picker-option-text", option.textContent);
      const note = this.note(option.value);
      item.append(icon("check", "icon list-picker-check"), text);
      if (note) text.append(el("span", "list-picker-note", note));
      this.list.append(item);
    }
    const chosen = this.select.selectedOptions[0];
    this.current.textContent = chosen ? chosen.textContent : "";
    this.button.setAttribute("aria-label", `${this.labelText}: ${this.current.textContent}`);
    this.button.title = this.labelText;
  }

  get options() {
    return [...this.list.querySelectorAll('[role="option"]')];
  }

  open() {
    this.sync();
    this.list.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    const options = this.options;
    this.focus(options.find((o) => o.getAttribute("aria-selected") === "true") || options[0]);
    this.list.focus();
  }

  close(refocus) {
    this.list.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    this.list.removeAttribute("aria-activedescendant");
    if (refocus) this.button.focus();
  }

  focus(option) {
    if (!option) return;
    for (const o of this.options) o.classList.toggle("active", o === option);
    this.list.setAttribute("aria-activedescendant", option.id);
    option.scrollIntoView({ block: "nearest" });
  }

  key(e) {
    const options = this.options;
    const active = options.findIndex((o) => o.classList.contains("active"));
    const moves = { ArrowDown: active + 1, ArrowUp: active - 1, Home: 0, End: options.length - 1 };
    if (e.key in moves) {
      e.preventDefault();
      this.focus(options[Math.max(0, Math.min(options.length - 1, moves[e.key]))]);
    } else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      if (options[active]) this.pick(options[active]);
    } else if (e.key === "Escape") {
      e.preventDefault();
      this.close(true);
    } else if (e.key === "Tab") {
      this.close(false);
    }
  }

  pick(option) {
    const changed = this.select.value !== option.dataset.value;
    this.select.value = option.dataset.value;
    this.close(true);
    if (changed) this.select.dispatchEvent(new Event("change"));
    else this.sync();
  }
}
