// The composer: the textarea, Send, Stop and a short-lived error line.

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
