// What the two forms a tool card can hold (an approval's choices, a tool's request for input) share: sending
// once, then waiting for the server's answer with the form disabled, and one line saying what happens.

export class CardForm {
  /**
   * @param {string} sendingText  the line shown while the answer is on its way
   * Subclasses set `fieldset`, `messageEl` and `onSend` before the form is used.
   */
  constructor(sendingText) {
    this.sendingText = sendingText;
    this.sending = false;
  }

  send(payload) {
    if (this.sending) return;
    this.sending = true;
    this.fieldset.disabled = true;
    this.showMessage(this.sendingText, "sending");
    this.onSend(payload);
  }

  /** The answer did not go through and may be given again (refused as invalid, not connected). */
  fail(message) {
    this.sending = false;
    this.fieldset.disabled = false;
    this.showMessage(message, "error");
  }

  /** The answer cannot be given from here (decided or answered elsewhere, timed out): the events will close it. */
  block(message) {
    this.sending = false;
    this.fieldset.disabled = true;
    this.showMessage(message, "error");
  }

  showMessage(text, kind) {
    this.messageEl.textContent = text;
    this.messageEl.dataset.kind = kind;
    this.messageEl.setAttribute("role", kind === "error" ? "alert" : "status");
    this.messageEl.hidden = false;
  }
}
