// The collapsible card of one tool call: its arguments, status, progress and result, and while it waits for a
// person the approval choices (approval.js), a request for input (elicitation.js) or to connect (connect.js).
// Everything from the model or a tool goes in as text: never through innerHTML.

import { el, prettyJson } from "./dom.js";
import { ApprovalPanel, decisionText, originalArgsView } from "./approval.js";
import { InputForm, answeredText } from "./elicitation.js";
import { ConnectPanel, connectAnsweredText } from "./connect.js";
import { ArtifactImages } from "./images.js";
import { ArtifactViewer } from "./artifact-viewer.js";
import { _, format, formatNumber } from "./i18n.js";

const TOOL_STATUS_LABELS = {
  streaming: _("preparing…"),
  requested: _("queued"),
  awaiting_approval: _("needs approval"),
  running: _("running…"),
  success: _("success"),
  error: _("error"),
  rejected: _("rejected"),
  replied: _("replied"),
  cancelled: _("cancelled"),
};
const FINAL_TOOL_STATUSES = new Set(["success", "error", "rejected", "replied", "cancelled"]);

/** "12 ms", "1.4 s", "2 min 5 s". */
export function formatDuration(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return format(_("%(n)s ms"), { n: formatNumber(Math.round(ms)) });
  if (ms < 60_000) {
    const digits = ms < 10_000 ? 1 : 0;
    return format(_("%(n)s s"), { n: formatNumber(ms / 1000, { minimumFractionDigits: digits, maximumFractionDigits: digits }) });
  }
  const minutes = Math.floor(ms / 60_000);
  return format(_("%(minutes)s min %(seconds)s s"), { minutes, seconds: Math.round((ms % 60_000) / 1000) });
}

let cardCount = 0;

/** A collapsible card for one tool call, with the approval choices while it waits for a person. */
export class ToolCardView {
  /**
   * @param {object} opts
   * @param {(toolCallId: any, payload: object) => void} [opts.onDecide]
   * @param {(toolCallId: any) => Promise<object>} [opts.loadArtifact]  the stored artifact (see ArtifactViewer)
   * @param {(name: string) => Promise<string|null>} [opts.describe]  the tool's description, as the person's tool
   *   list has it now (null when the tool is not in it)
   * @param {(toolCallId: any, payload: object) => void} [opts.onInput]  an answer to the tool's request for input
   */
  constructor({
    id, name, callId = "", status = "streaming", onDecide = null, loadArtifact = null, describe = null, onInput = null,
  }) {
    this.id = id;
    this.name = name || "tool";
    this.args = undefined;
    this.onDecide = onDecide;
    this.onInput = onInput;
    this.input = null;
    this.loadStored = loadArtifact;
    this.stored = null; // the artifact endpoint's answer, once asked (a Promise)
    this.hasArtifact = false;
    this.describe = describe;
    this.described = false;
    this.approval = null;
    this.root = el("details", "tool-card");
    this.root.dataset.toolCallId = String(id);
    if (callId) this.root.dataset.callId = String(callId);
    cardCount += 1;

    const summary = el("summary", "tool-summary");
    const icon = el("span", "tool-icon", "⚙");
    icon.setAttribute("aria-hidden", "true");
    this.statusEl = el("span", "status");
    // What a running tool reported of its progress ("3/10 — Downloading"), until it completes.
    this.progressEl = el("span", "tool-progress");
    this.progressEl.hidden = true;
    this.durationEl = el("span", "duration");
    summary.append(icon, el("span", "tool-name", this.name), this.statusEl, this.progressEl, this.durationEl);

    const body = el("div", "tool-body");
    this.descriptionEl = el("p", "tool-description");
    this.descriptionEl.hidden = true;
    this.argsSection = el("section", "tool-section tool-args");
    this.argsTitle = el("div", "tool-section-title", _("Arguments"));
    this.argsEl = el("pre", "tool-args-text");
    this.argsNode = document.createTextNode("");
    this.argsEl.append(this.argsNode);
    this.wasEl = null;
    this.argsSection.append(this.argsTitle, this.argsEl);

    this.resultSection = el("section", "tool-section tool-result");
    this.resultEl = el("pre", "tool-result-text");
    this.resultTitle = el("div", "tool-section-title", _("Result"));
    this.resultSection.append(this.resultTitle, this.resultEl);
    this.resultSection.hidden = true;
    this.artifact = new ArtifactViewer({
      name: this.name,
      load: loadArtifact ? () => this.loadArtifact() : null,
      idBase: `tool-card-${cardCount}`,
    });
    this.images = new ArtifactImages(this.name);
    this.inputEl = el("div", "tool-input");
    this.inputEl.hidden = true;
    this.inputDoneEl = el("p", "tool-input-answered");
    this.inputDoneEl.hidden = true;

    this.approvalEl = el("div", "tool-approval");
    this.approvalEl.hidden = true;
    this.decisionEl = el("p", "tool-decision");
    this.decisionEl.hidden = true;

    body.append(
      this.descriptionEl, this.argsSection, this.approvalEl, this.decisionEl, this.inputEl, this.inputDoneEl,
      this.resultSection, this.images.root, this.images.structured, this.artifact.root,
    );
    this.root.append(summary, body);
    this.root.addEventListener("toggle", () => {
      if (!this.root.open) return;
      this.loadDescription();
      if (this.hasArtifact) this.showImages();
    });
    this.setStatus(status);
  }

  /** On the first opening: what the tool does, from the person's tool list (text, as the admin wrote it). */
  async loadDescription() {
    if (this.described || !this.describe) return;
    this.described = true;
    let text = null;
    try {
      text = await this.describe(this.name);
    } catch {
      text = null;
    }
    if (typeof text === "string" && text.trim()) {
      this.descriptionEl.textContent = text;
      this.descriptionEl.hidden = false;
    }
  }

  /** Frees the artifact's download and image URLs; the card is leaving the page. */
  dispose() {
    this.artifact.dispose();
    this.images.dispose();
  }

  /** The stored artifact (fetched once; again after a failure). */
  loadArtifact() {
    if (!this.loadStored) return Promise.reject(new Error(_("The artifact cannot be loaded here.")));
    if (!this.stored) {
      this.stored = this.loadStored(this.id);
      this.stored.catch(() => { this.stored = null; });
    }
    return this.stored;
  }

  /** The artifact's images and structured content, when it is shaped like an MCP tool result. */
  async showImages() {
    if (this.imagesShown || !this.loadStored) return;
    this.imagesShown = true;
    try {
      const data = await this.loadArtifact();
      if (data && !data.truncated) this.images.fill(data.artifact);
    } catch {
      this.imagesShown = false; // the viewer's button says what went wrong, and tries again
    }
  }

  get status() {
    return this.root.dataset.status;
  }

  setStatus(status) {
    this.root.dataset.status = status;
    this.statusEl.className = `status status-${status}`;
    this.statusEl.textContent = TOOL_STATUS_LABELS[status] || status;
    if (status !== "awaiting_approval") this.closeApproval();
    if (status !== "running") {
      this.setProgress(null);
      this.closeInput();
    }
  }

  /** tool_call.progress: "3/10 — Downloading" beside "running…"; null clears it. */
  setProgress(report) {
    const text = report && this.status === "running" ? progressText(report) : "";
    this.progressEl.textContent = text;
    this.progressEl.hidden = !text;
  }

  appendArgs(text) {
    if (text) this.argsNode.appendData(text);
  }

  setArgs(args) {
    this.args = args;
    this.argsNode.data = prettyJson(args);
  }

  /** Shows the result; `content` is text the model saw (or the error), shown as text. `images`: how many images the
   * artifact holds that the card shows (live events only): the card opens and shows them at once. */
  complete({ status, content, durationMs, hasArtifact, images = 0 }) {
    this.setStatus(FINAL_TOOL_STATUSES.has(status) ? status : status || "success");
    this.durationEl.textContent = formatDuration(durationMs);
    const text = prettyJson(content);
    this.resultEl.textContent = text;
    this.resultEl.classList.toggle("is-error", status === "error");
    this.resultTitle.textContent = { error: _("Error"), rejected: _("Not run"), replied: _("Sent to the model"), cancelled: _("Not run") }[status] || _("Result");
    this.resultEl.hidden = text.length === 0;
    this.resultSection.hidden = text.length === 0;
    this.artifact.show(Boolean(hasArtifact));
    this.hasArtifact = Boolean(hasArtifact);
    if (this.hasArtifact && images > 0) this.root.open = true;
    if (this.hasArtifact && this.root.open) this.showImages();
  }

  /** tool_call.input_requested (or a snapshot's `input_request`): the form, open on the card. */
  askInput({ request, message, schema }) {
    this.closeInput();
    this.inputDoneEl.hidden = true;
    this.root.open = true;
    this.input = new InputForm({
      request, message, schema,
      onSend: (payload) => {
        if (this.onInput) this.onInput(this.id, payload);
      },
    });
    this.inputEl.replaceChildren(this.input.root);
    this.inputEl.hidden = false;
  }

  /** tool_call.connect_requested (or a snapshot's `connect_request`): the Connect card, open on the call. */
  askConnect({ request, server, mode, url }) {
    this.closeInput();
    this.inputDoneEl.hidden = true;
    this.root.open = true;
    this.input = new ConnectPanel({
      request, server, mode, url,
      onSend: (payload) => {
        if (this.onInput) this.onInput(this.id, payload);
      },
    });
    this.inputEl.replaceChildren(this.input.root);
    this.inputEl.hidden = false;
  }

  /** tool_call.input_answered: the form goes (in every tab), and what became of it shows. */
  inputAnswered({ request, action, by }) {
    if (!this.input || this.input.request !== String(request)) return;
    const wasConnect = this.input instanceof ConnectPanel;
    this.closeInput();
    const who = typeof by === "string" ? by : "";
    this.inputDoneEl.textContent = wasConnect ? connectAnsweredText(action, who) : answeredText(action, who);
    this.inputDoneEl.dataset.action = action || "";
    this.inputDoneEl.hidden = false;
  }

  closeInput() {
    this.input = null;
    this.inputEl.replaceChildren();
    this.inputEl.hidden = true;
  }

  /** The answer was not taken; the form stays with `message`. */
  inputFailed(request, message) {
    if (this.input && this.input.request === String(request)) this.input.fail(message);
  }

  /** The request is no longer open from here; the events will close the form. */
  inputBlocked(request, message) {
    if (this.input && this.input.request === String(request)) this.input.block(message);
  }

  get inputSending() {
    return Boolean(this.input && this.input.sending);
  }

  /** The offered choices for a call that waits for a person. `allow` as in tool_call.awaiting_approval. */
  askApproval(allow) {
    this.closeApproval();
    this.setStatus("awaiting_approval");
    // Asked again (a retry after a Stop): the "not run" of the cancelled call no longer holds.
    this.resultEl.textContent = "";
    this.resultSection.hidden = true;
    this.root.open = true;
    this.approval = new ApprovalPanel({
      toolName: this.name,
      allow,
      argsEl: this.argsEl,
      getArgs: () => this.args,
      onSend: (payload) => {
        if (this.onDecide) this.onDecide(this.id, payload);
      },
    });
    this.approvalEl.replaceChildren(this.approval.root);
    this.approvalEl.hidden = false;
  }

  closeApproval() {
    if (this.approval) this.approval.destroy();
    this.approval = null;
    this.approvalEl.replaceChildren();
    this.approvalEl.hidden = true;
  }

  /** The decision was not taken and may be made again; `message` says why. */
  approvalFailed(message) {
    this.approval?.fail(message);
  }

  /** The decision cannot be made from here (e.g. decided elsewhere); the events will tell what happened. */
  approvalBlocked(message) {
    this.approval?.block(message);
  }

  get approvalSending() {
    return Boolean(this.approval && this.approval.sending);
  }

  /** tool_call.decided: the buttons go, who decided what shows, and the arguments become what will run. */
  decided({ decision, args, original_args: originalArgs, message, by }) {
    this.closeApproval();
    if (args !== undefined && args !== null) this.setArgs(args);
    if (decision === "edit" && originalArgs !== undefined && originalArgs !== null) this.showEdited(originalArgs);
    const text = decisionText(decision, typeof by === "string" ? by : "", typeof message === "string" ? message : "");
    this.showDecision(text, decision);
    if (this.status === "awaiting_approval") {
      const decidedStatus = { approve: "requested", edit: "requested", respond: "replied" }[decision] || "rejected";
      this.setStatus(decidedStatus);
    }
    this.root.open = true;
  }

  /** A person changed the arguments before the call ran: the original shows struck through under "Was". */
  showEdited(originalArgs) {
    this.argsTitle.textContent = _("Arguments (edited)");
    const was = originalArgsView(originalArgs, this.args);
    if (this.wasEl) this.wasEl.replaceWith(was);
    else this.argsSection.append(was);
    this.wasEl = was;
    this.root.dataset.edited = "true";
  }

  showDecision(text, decision) {
    this.decisionEl.textContent = text;
    this.decisionEl.dataset.decision = decision || "";
    this.decisionEl.hidden = false;
  }
}

/** "3/10 — Downloading", "40 %", "1.5 — Resizing": a tool's progress report as its card shows it. */
export function progressText({ progress, total, message }) {
  const number = (n) => (Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100));
  let text = "";
  if (typeof progress === "number" && Number.isFinite(progress)) {
    text = typeof total === "number" && Number.isFinite(total) && total > 0
      ? `${number(progress)}/${number(total)}`
      : number(progress);
  }
  if (typeof message === "string" && message) text = text ? `${text} — ${message}` : message;
  return text;
}

