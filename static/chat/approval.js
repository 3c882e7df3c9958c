// The approval part of a tool card: the offered choices while a call waits for a person (approve, edit the
// arguments as JSON, reject with an optional reason, reply instead of running), and afterwards who decided what.
// Arguments, reasons and usernames are untrusted: they only ever go in as text.

import { CardForm } from "./card-form.js";
import { el, button, prettyJson, isJsonObject } from "./dom.js";
import { _, format } from "./i18n.js";

let formCounter = 0;

/** The choices for one waiting call. The card mounts `root` and forwards the server's answers. */
export class ApprovalPanel extends CardForm {
  /**
   * @param {object} o
   * @param {string} o.toolName
   * @param {{approve?: boolean, edit?: boolean, reject?: boolean, respond?: boolean}|null} o.allow
   * @param {HTMLElement} o.argsEl  the card's arguments <pre>, hidden while the JSON editor replaces it
   * @param {() => any} o.getArgs   the arguments as they stand
   * @param {(payload: object) => void} o.onSend  gets {decision, args?, message?, for_thread?}
   */
  constructor({ toolName, allow, argsEl, getArgs, onSend }) {
    super(_("Sending your decision…"));
    Object.assign(this, { argsEl, getArgs, onSend });
    const uid = ++formCounter;
    const offered = (decision) => !allow || allow[decision] !== false;
    this.root = el("div", "approval");
    this.fieldset = el("fieldset", "approval-fieldset");
    this.fieldset.append(el("legend", "tool-approval-label", _("This tool call needs your approval.")));

    this.actions = el("div", "approval-actions");
    if (offered("approve")) {
      this.actions.append(button(_("Approve"), "button primary decide-approve", () => {
        this.send({ decision: "approve", ...this.grant() });
      }));
    }
    if (offered("edit")) this.actions.append(button(_("Edit"), "button decide-edit", () => this.mode("edit")));
    if (offered("reject")) this.actions.append(button(_("Reject"), "button decide-reject", () => this.mode("reject")));
    if (offered("respond")) this.actions.append(button(_("Reply"), "button decide-respond", () => this.mode("respond")));
    this.fieldset.append(this.actions);

    this.editor = el("textarea", "approval-args-input");
    this.editor.spellcheck = false;
    this.editError = inputError();
    this.editor.addEventListener("input", () => clearInputError(this.editor, this.editError));
    this.editor.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.submitEdit();
      }
    });
    this.editForm = this.form("edit", `approval-args-${uid}`, _("Arguments (a JSON object)"), this.editor,
      this.editError, _("Run with these arguments"), () => this.submitEdit());

    this.reasonInput = textInput("approval-reason-input", _("Why not? (optional, the model sees it)"));
    this.rejectForm = this.form("reject", `approval-reason-${uid}`, _("Reason (optional)"), this.reasonInput, null,
      _("Reject"), () => {
        const message = this.reasonInput.value.trim();
        this.send(message ? { decision: "reject", message } : { decision: "reject" });
      });

    this.replyInput = textInput("approval-reply-input", _("The model gets this instead of a result"));
    this.replyError = inputError();
    this.replyInput.addEventListener("input", () => clearInputError(this.replyInput, this.replyError));
    this.respondForm = this.form("respond", `approval-reply-${uid}`, _("Your reply"), this.replyInput, this.replyError,
      _("Send reply"), () => {
        const message = this.replyInput.value.trim();
        if (!message) {
          showInputError(this.replyInput, this.replyError, _("Write a reply first."));
          return;
        }
        this.send({ decision: "respond", message });
      });

    this.grantBox = null;
    this.grantLabel = null;
    if (offered("approve") || offered("edit")) {
      this.grantBox = el("input", "approval-for-thread-input");
      this.grantBox.type = "checkbox";
      this.grantLabel = el("label", "approval-for-thread");
      this.grantLabel.append(this.grantBox, document.createTextNode(` ${format(_("Don't ask again for %(tool)s in this chat"), { tool: toolName })}`));
      this.fieldset.append(this.grantLabel);
    }

    this.messageEl = el("p", "approval-message");
    this.messageEl.setAttribute("role", "status");
    this.messageEl.hidden = true;
    this.root.append(this.fieldset, this.messageEl);
    this.mode("choose");
  }

  /** One small form (edit / reject / respond) with its field, an inline error, a submit and a Cancel button. */
  form(name, fieldId, labelText, field, errorEl, submitLabel, onSubmit) {
    const form = el("form", `approval-form approval-${name}`);
    form.noValidate = true;
    const label = el("label", "approval-field-label", labelText);
    label.htmlFor = fieldId;
    field.id = fieldId;
    const row = el("div", "approval-form-actions");
    const submit = el("button", `button ${name === "reject" ? "danger" : "primary"} approval-${name}-submit`,
      submitLabel);
    submit.type = "submit";
    row.append(submit, button(_("Cancel"), "button subtle approval-cancel", () => this.mode("choose")));
    form.append(label, field);
    if (errorEl) form.append(errorEl);
    form.append(row);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (!this.sending) onSubmit();
    });
    this.fieldset.append(form);
    return form;
  }

  /** "choose" shows the buttons; "edit", "reject" and "respond" show that form instead. */
  mode(name) {
    this.current = name;
    this.actions.hidden = name !== "choose";
    this.editForm.hidden = name !== "edit";
    this.rejectForm.hidden = name !== "reject";
    this.respondForm.hidden = name !== "respond";
    if (this.grantLabel) this.grantLabel.hidden = name !== "choose" && name !== "edit";
    this.argsEl.hidden = name === "edit";
    this.hideMessage();
    if (name === "edit") {
      const args = this.getArgs();
      this.editor.value = args === undefined || args === null ? "{}" : prettyJson(args);
      this.editor.rows = Math.min(Math.max(this.editor.value.split("\n").length + 1, 3), 16);
      clearInputError(this.editor, this.editError);
      this.editor.focus();
    } else if (name === "reject") {
      this.reasonInput.focus();
    } else if (name === "respond") {
      clearInputError(this.replyInput, this.replyError);
      this.replyInput.focus();
    }
  }

  grant() {
    return this.grantBox && this.grantBox.checked ? { for_thread: true } : {};
  }

  /** Parses the editor: a JSON object is sent as the new arguments, anything else is explained and kept. */
  submitEdit() {
    let parsed;
    try {
      parsed = JSON.parse(this.editor.value);
    } catch (err) {
      showInputError(this.editor, this.editError, format(_("Not valid JSON: %(reason)s"), { reason: err.message }));
      return;
    }
    if (!isJsonObject(parsed)) {
      showInputError(this.editor, this.editError, _('The arguments must be a JSON object, like {"name": "value"}.'));
      return;
    }
    this.send({ decision: "edit", args: parsed, ...this.grant() });
  }

  hideMessage() {
    this.messageEl.hidden = true;
    this.messageEl.textContent = "";
  }

  /** Takes the panel away (the call was decided, cancelled, or left waiting). */
  destroy() {
    this.argsEl.hidden = false;
    this.root.remove();
  }
}

function textInput(className, placeholder) {
  const input = el("input", className);
  input.type = "text";
  input.placeholder = placeholder;
  input.maxLength = 4000;
  return input;
}

function inputError() {
  const p = el("p", "approval-input-error");
  p.setAttribute("role", "alert");
  p.hidden = true;
  return p;
}

function showInputError(field, errorEl, text) {
  errorEl.textContent = text;
  errorEl.hidden = false;
  field.setAttribute("aria-invalid", "true");
  field.focus();
}

function clearInputError(field, errorEl) {
  errorEl.hidden = true;
  errorEl.textContent = "";
  field.removeAttribute("aria-invalid");
}

/** "Approved by grace", "Rejected by grace: not now", … (`by` may be unknown, e.g. after a reload). */
export function decisionText(decision, by, message) {
  // Whole phrases per case (with and without who), so that each language orders them as it needs.
  const said = (withWho, alone) => format(by ? withWho : alone, { by });
  const why = message ? `: ${message}` : "";
  switch (decision) {
    case "approve": return said(_("Approved by %(by)s"), _("Approved"));
    case "edit": return said(_("Edited by %(by)s"), _("Edited"));
    case "reject": return said(_("Rejected by %(by)s"), _("Rejected")) + why;
    case "respond": return said(_("Replied by %(by)s"), _("Replied")) + why;
    default: return said(_("Decided by %(by)s"), _("Decided"));
  }
}

/** Top-level keys whose values differ between the original and the edited arguments. */
export function changedKeys(original, edited) {
  if (!isJsonObject(original) || !isJsonObject(edited)) return [];
  const keys = new Set([...Object.keys(original), ...Object.keys(edited)]);
  return [...keys].filter((k) => JSON.stringify(original[k]) !== JSON.stringify(edited[k]));
}

/** What the arguments were before a person edited them: which keys changed, and the original, struck through. */
export function originalArgsView(original, edited) {
  const box = el("div", "tool-args-was");
  const keys = changedKeys(original, edited);
  if (keys.length) box.append(el("p", "tool-args-changes", format(_("Changed: %(keys)s"), { keys: keys.join(", ") })));
  const pre = el("pre", "tool-args-original");
  pre.append(el("del", "", prettyJson(original)));
  box.append(el("div", "tool-section-title", _("Was")), pre);
  return box;
}
