// The run's state as a notice at the end of the conversation: waiting for a decision, failed (Retry), stopped by a
// server restart (Retry), stopped by the person (a small Retry), or at the step limit (Continue).
// At most one shows at a time; a new run removes it.

import { el, button } from "./dom.js";
import { _, format, ngettext } from "./i18n.js";

const INTERRUPTED_TEXT = _("The server stopped during this answer; the partial text is kept.");

export class RunNotices {
  /**
   * @param {object} o
   * @param {(node: HTMLElement) => void} o.append  puts a node at the end of the conversation
   * @param {() => void} o.onRetry
   * @param {() => void} o.onContinue  run.continue: the server gives the run its step limit
   * @param {number|null} o.continueSteps  that limit (the chat's: its agent's, else AGENTWEB_MAX_STEPS), for the label
   */
  constructor({ append, onRetry, onContinue, continueSteps = null }) {
    Object.assign(this, { append, onRetry, onContinue, continueSteps });
    this.node = null;
    this.actionButton = null;
  }

  get kind() {
    return this.node && this.node.isConnected ? this.node.dataset.kind : null;
  }

  clear() {
    if (this.node) this.node.remove();
    this.node = null;
    this.actionButton = null;
  }

  /**
   * Replaces the notice. `kind`: waiting | failed | interrupted | cancelled | max_steps.
   * `action`: {label, className, run} for a button.
   */
  show(kind, text, action = null) {
    this.clear();
    const alert = kind === "failed";
    const node = el("div", `run-state ${alert ? "run-error" : "run-notice"} run-state-${kind.replace("_", "-")}`);
    node.dataset.kind = kind;
    node.setAttribute("role", alert ? "alert" : "status");
    node.append(el("span", "run-state-text", text));
    if (action) {
      this.actionButton = button(action.label, `button run-action ${action.className}`, () => {
        this.actionButton.disabled = true;
        action.run();
      });
      node.append(this.actionButton);
    }
    this.node = node;
    this.append(node);
    return node;
  }

  /** Makes the button usable again (the retry / continue was refused or could not be sent). */
  enableAction() {
    if (this.actionButton) this.actionButton.disabled = false;
  }

  retryAction(small = false) {
    return { label: _("Retry"), className: small ? "run-retry small" : "run-retry", run: () => this.onRetry() };
  }

  waiting() {
    this.show("waiting", _("Waiting for your decision on the tool call above."));
  }

  failed(error) {
    this.show("failed", typeof error === "string" && error ? error : _("The run failed."), this.retryAction());
  }

  interrupted() {
    this.show("interrupted", INTERRUPTED_TEXT, this.retryAction());
  }

  cancelled() {
    this.show("cancelled", _("Stopped."), this.retryAction(true));
  }

  maxSteps() {
    this.show("max_steps", _("Stopped after the step limit."), {
      label: continueLabel(this.continueSteps),
      className: "primary run-continue",
      run: () => this.onContinue(),
    });
  }

  /** The notice a snapshot's `run` calls for (or none). */
  fromRun(run) {
    this.clear();
    if (!run) return;
    switch (run.status) {
      case "waiting": this.waiting(); break;
      case "failed": this.failed(run.error); break;
      case "interrupted": this.interrupted(); break;
      case "cancelled": this.cancelled(); break;
      case "completed":
        if (run.reason === "max_steps") this.maxSteps();
        break;
      default: break;
    }
  }
}

function continueLabel(steps) {
  if (!Number.isInteger(steps) || steps < 1) return _("Continue");
  return format(ngettext("Continue for %(steps)s more step", "Continue for %(steps)s more steps", steps), { steps });
}
