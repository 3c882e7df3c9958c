// DOM building for messages, tool cards and notices.
// Everything that comes from the model, a tool or a person goes in as text (textContent, Text nodes, appendData):
// never through innerHTML.

import { button, el, prettyJson } from "./dom.js";
import { ApprovalPanel, decisionText, originalArgsView } from "./approval.js";
import { InputForm, answeredText } from "./elicitation.js";
import { ConnectPanel, connectAnsweredText } from "./connect.js";
import { ArtifactImages, withoutImageData } from "./images.js";
import { MarkdownStream, onCopyClick } from "./markdown.js";
import { structuredCard } from "./structured.js";
import { _, format, formatNumber } from "./i18n.js";

export { el, prettyJson };

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

export function typingDots() {
  const dots = el("span", "typing");
  dots.setAttribute("aria-hidden", "true");
  for (let i = 0; i < 3; i += 1) dots.append(el("span", "typing-dot"));
  return dots;
}

/**
 * One message. A user message is its own bubble (article.message.user). An assistant message is one model call: a
 * segment (div.answer-segment) of the turn's answer (answer.js AnswerView, which holds the header, Copy and the
 * usage line); only assistant messages hold tool cards.
 */
export class MessageView {
  constructor({ id = null, role = "assistant", content = "", status = "complete" } = {}) {
    this.id = id;
    this.role = role === "user" ? "user" : "assistant";
    this.answer = null; // the AnswerView holding this segment (assistant messages)
    this.usage = null; // this model call's usage (usage.js showMessageUsage)
    if (this.role === "user") {
      this.root = el("article", "message user");
      const meta = el("div", "message-meta");
      meta.append(el("span", "message-role", _("You")));
      this.root.append(meta);
    } else {
      this.root = el("div", "answer-segment");
    }
    if (id !== null && id !== undefined) this.root.dataset.messageId = String(id);
    this.textEl = el("div", "message-text");
    this.textNode = null;
    this.markdown = null;
    this.length = 0;
    if (this.role === "assistant") {
      // Model output: Markdown built as DOM nodes by markdown.js (never HTML parsing), streamed block by block.
      this.textEl.classList.add("markdown");
      this.markdown = new MarkdownStream(this.textEl);
      this.textEl.addEventListener("click", onCopyClick);
    } else {
      this.textNode = document.createTextNode("");
      this.textEl.append(this.textNode);
    }
    this.typingEl = null;
    this.toolsEl = el("div", "tool-calls");
    this.toolsEl.hidden = true;
    this.noteEl = null;
    this.root.append(this.textEl, this.toolsEl);
    this.setText(content || "");
    this.setStatus(status);
  }

  /** A user message's attachments (attachments.js attachmentList), after its text. */
  showAttachments(list) {
    this.root.querySelector(".attachment-list")?.remove();
    this.textEl.after(list);
  }

  /** Replaces the whole text (snapshots and message.completed only). */
  setText(text) {
    this.length = text.length;
    if (this.markdown) this.markdown.set(text);
    else this.textNode.data = text;
    this.textEl.hidden = text.length === 0;
    this.answer?.changed();
  }

  /** The text as written (an answer's Markdown source, not its rendering): what Copy copies. */
  sourceText() {
    return this.markdown ? this.markdown.source : this.textNode.data;
  }

  /** The model's thinking, collapsed above the answer; created on its first piece. */
  appendReasoning(text) {
    if (!text) return;
    if (!this.reasoningNode) {
      const details = el("details", "reasoning");
      details.append(el("summary", "reasoning-summary", _("Thinking")));
      const body = el("div", "reasoning-text");
      this.reasoningNode = document.createTextNode("");
      body.append(this.reasoningNode);
      details.append(body);
      this.textEl.before(details);
    }
    this.reasoningNode.appendData(text);
  }

  /** Appends one streamed piece: the open Markdown block is re-rendered on the next animation frame. */
  appendText(text) {
    if (!text) return;
    this.length += text.length;
    if (this.markdown) this.markdown.append(text);
    else this.textNode.appendData(text);
    if (this.textEl.hidden) this.textEl.hidden = false;
  }

  get streaming() {
    return this.root.dataset.status === "streaming";
  }

  setStatus(status) {
    this.root.dataset.status = status || "complete";
    this.answer?.changed();
    // The open Markdown block is rebuilt as it grows: screen readers hear the text once it settles.
    if (this.markdown) this.textEl.setAttribute("aria-busy", status === "streaming" ? "true" : "false");
    if (status === "streaming") {
      if (!this.typingEl) {
        this.typingEl = typingDots();
        this.textEl.after(this.typingEl);
      }
      return;
    }
    this.stopTyping();
    if (status === "cancelled") this.setNote(_("stopped"), "message-note stopped");
    else if (status === "error") this.setNote(_("The answer ended with an error."), "message-note error");
  }

  stopTyping() {
    if (this.typingEl) {
      this.typingEl.remove();
      this.typingEl = null;
    }
  }

  /** A note at the bottom of the message, e.g. "stopped" or "cut off by the output limit". */
  setNote(text, className = "message-note") {
    if (!this.noteEl) {
      this.noteEl = el("p", className);
      this.root.append(this.noteEl);
    }
    this.noteEl.className = className;
    this.noteEl.textContent = text;
  }

  complete(content, status) {
    if (typeof content === "string" && this.markdown) {
      this.length = content.length;
      this.markdown.finish(content);
      this.textEl.hidden = content.length === 0;
    } else if (typeof content === "string") this.setText(content);
    else this.markdown?.finish();
    this.setStatus(status || "complete");
  }

  /** A structured final answer (message.completed / snapshot `structured`): its card in place of the JSON text. */
  setStructured(value) {
    if (value === undefined) return;
    const card = structuredCard(value);
    if (this.structuredEl) this.structuredEl.replaceWith(card);
    else this.textEl.after(card);
    this.structuredEl = card;
    this.textEl.hidden = true; // the card's JSON view holds the same text
  }

  addToolCard(card) {
    this.stopTyping(); // the card shows the activity from here on
    this.toolsEl.hidden = false;
    this.toolsEl.append(card.root);
  }
}

/** "512 bytes", "3.4 KB", "1.2 MB". */
export function formatBytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return "";
  const one = { minimumFractionDigits: 1, maximumFractionDigits: 1 };
  if (n < 1000) return format(_("%(n)s bytes"), { n: formatNumber(n) });
  if (n < 1_000_000) return format(_("%(n)s KB"), { n: formatNumber(n / 1000, one) });
  return format(_("%(n)s MB"), { n: formatNumber(n / 1_000_000, one) });
}

let cardCount = 0;

/**
 * The "Show artifact" part of a tool card: fetches the artifact once, shows it as indented JSON text, and offers
 * it as a download (a Blob URL). `load()` resolves to the endpoint's answer ({artifact} or {truncated, preview,
 * size, limit}) or rejects with an Error whose message is for the person.
 */
class ArtifactViewer {
  constructor({ name, load, idBase }) {
    this.name = name;
    this.load = load;
    this.data = null;
    this.loading = false;
    this.blobUrl = null;
    this.root = el("section", "tool-section tool-artifact");
    this.root.hidden = true;
    const title = el("div", "tool-section-title", _("Artifact"));
    const note = el("p", "tool-note", _("The tool also stored an artifact: data kept out of the model's context."));
    this.textEl = el("pre", "tool-artifact-text");
    this.textEl.id = `${idBase}-artifact`;
    this.textEl.hidden = true;
    this.toggle = button(_("Show artifact"), "button small tool-artifact-toggle", () => this.toggled());
    this.toggle.setAttribute("aria-expanded", "false");
    this.toggle.setAttribute("aria-controls", this.textEl.id);
    this.download = el("a", "button small tool-artifact-download", _("Download"));
    this.download.hidden = true;
    const actions = el("div", "tool-artifact-actions");
    actions.append(this.toggle, this.download);
    this.statusEl = el("p", "tool-artifact-status");
    this.statusEl.setAttribute("role", "status");
    this.statusEl.hidden = true;
    this.root.append(title, note, actions, this.statusEl, this.textEl);
  }

  show(available) {
    this.root.hidden = !available;
  }

  setStatus(text, kind = "") {
    this.statusEl.textContent = text;
    this.statusEl.dataset.kind = kind;
    this.statusEl.hidden = !text;
  }

  async toggled() {
    if (this.loading) return;
    if (!this.textEl.hidden) {
      this.textEl.hidden = true;
      this.toggle.textContent = _("Show artifact");
      this.toggle.setAttribute("aria-expanded", "false");
      return;
    }
    if (!this.data) {
      if (!this.load) {
        this.setStatus(_("The artifact cannot be loaded here."), "error");
        return;
      }
      this.loading = true;
      this.toggle.disabled = true;
      this.toggle.setAttribute("aria-busy", "true");
      this.setStatus(_("Loading the artifact…"));
      try {
        this.data = await this.load();
        this.fill(this.data);
      } catch (error) {
        this.setStatus(error instanceof Error && error.message ? error.message : _("The artifact could not be loaded."), "error");
        return;
      } finally {
        this.loading = false;
        this.toggle.disabled = false;
        this.toggle.removeAttribute("aria-busy");
      }
    }
    this.textEl.hidden = false;
    this.toggle.textContent = _("Hide artifact");
    this.toggle.setAttribute("aria-expanded", "true");
  }

  /** The artifact as text (never as markup) and a download of that text. */
  fill(data) {
    const truncated = Boolean(data && data.truncated);
    let text;
    if (truncated) {
      text = typeof data.preview === "string" ? data.preview : "";
      this.setStatus(
        format(_("The artifact is %(size)s: only its first %(limit)s is shown and downloaded."), { size: formatBytes(data.size), limit: formatBytes(data.limit) }),
        "truncated",
      );
    } else {
      // Images show above, as images: their base64 would only fill the viewer. The download keeps everything.
      text = JSON.stringify(data ? data.artifact : null, null, 2) ?? "null";
      this.setStatus("");
    }
    const shown = truncated ? text : (JSON.stringify(withoutImageData(data ? data.artifact : null), null, 2) ?? "null");
    this.textEl.textContent = shown;
    this.dispose();
    this.blobUrl = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    this.download.href = this.blobUrl;
    const safeName = this.name.replace(/[^A-Za-z0-9_-]/g, "_") || "tool";
    this.download.download = `${safeName}-artifact${truncated ? "-partial" : ""}.json`;
    this.download.textContent = truncated ? _("Download the part shown") : _("Download");
    this.download.hidden = false;
  }

  dispose() {
    if (this.blobUrl) URL.revokeObjectURL(this.blobUrl);
    this.blobUrl = null;
  }
}

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

/** Where a chat was started, when not in a tab (Thread.source): its badge's word, its tooltip and what a screen
 * reader hears before the word (templates/chat/thread_source.html draws the same). */
export const ORIGINS = {
  api: { label: _("API"), title: _("Started from the API"), spoken: `${_("started from the")} ` },
  schedule: { label: _("Scheduled"), title: _("Started by a schedule"), spoken: `${_("started by a schedule:")} ` },
  trigger: { label: _("Triggered"), title: _("Started by a webhook trigger"), spoken: `${_("started by a webhook:")} ` },
};

/** The badge of `source`, or null for a chat typed in a tab (or an origin this page does not know). */
export function originBadge(source) {
  const origin = Object.hasOwn(ORIGINS, source) ? ORIGINS[source] : null;
  if (!origin) return null;
  const badge = el("span", "badge thread-source");
  badge.dataset.origin = source;
  badge.title = origin.title;
  badge.append(el("span", "visually-hidden", origin.spoken), origin.label);
  return badge;
}

/** A sidebar entry; the title goes in as text. `source`: where the chat was started; one not typed in a tab is
 * marked as such in words. */
export function threadListItem({ id, title, href, current = false, source = "chat" }) {
  const item = el("li", "thread-item");
  item.dataset.threadId = String(id);
  const link = el("a", "thread-link");
  link.href = href;
  link.append(el("span", "thread-title", title || _("Untitled")));
  const badge = originBadge(source);
  if (badge) {
    item.dataset.source = source;
    link.append(badge);
  }
  if (current) link.setAttribute("aria-current", "page");
  item.append(link);
  return item;
}
