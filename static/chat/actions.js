// Frames a person's clicks send besides messages: decisions on waiting tool calls, answers to a tool's request
// for input, run.retry and run.continue.
// Each goes out with its own `ref`, so the server's `error` for it lands where the person clicked: a decision's
// error inside its tool card, a retry's or continue's next to the composer.

import { _ } from "./i18n.js";
const NOT_CONNECTED = _("Not connected — try again in a moment.");
const ALREADY_DECIDED = _("Already decided (in another tab?)");
const NOT_OPEN = _("This request is no longer open (answered in another tab, or it timed out).");

export class Actions {
  /**
   * @param {object} o
   * @param {{send: (frame: object) => boolean}} o.socket
   * @param {import("./thread.js").ThreadView} o.view
   * @param {import("./composer.js").Composer} o.composer
   * @param {() => string|null} o.threadId
   * @param {(code: string, message: string) => string} o.describe  composer text for an error code
   * @param {() => void} o.onRunActive  the server knows of a run we did not: learn about it
   */
  constructor({ socket, view, composer, threadId, describe, onRunActive }) {
    Object.assign(this, { socket, view, composer, threadId, describe, onRunActive });
    this.counter = 0;
    this.decisions = new Map(); // ref → tool call id
    this.inputs = new Map(); // ref → {toolCallId, request}
    this.followUps = new Set(); // refs of run.retry / run.continue frames
  }

  nextRef(prefix) {
    this.counter += 1;
    return `${prefix}-${this.counter}`;
  }

  /** `payload`: {decision, args?, message?, for_thread?} as the approval panel built it. */
  decide(toolCallId, payload) {
    const ref = this.nextRef("decide");
    const frame = { type: "tool_call.decide", tool_call: toolCallId, ...payload, ref };
    if (!this.socket.send(frame)) {
      this.view.toolCard(toolCallId)?.approvalFailed(NOT_CONNECTED);
      return;
    }
    this.decisions.set(ref, String(toolCallId));
  }

  /** `payload`: {request, action, content?} as the card's input form built it. */
  answerInput(toolCallId, payload) {
    const thread = this.threadId();
    const ref = this.nextRef("input");
    const frame = { type: "tool_call.input", thread, tool_call: toolCallId, ...payload, ref };
    if (!thread || !this.socket.send(frame)) {
      this.view.toolCard(toolCallId)?.inputFailed(payload.request, NOT_CONNECTED);
      return;
    }
    this.inputs.set(ref, { toolCallId: String(toolCallId), request: String(payload.request) });
  }

  retry() {
    this.followUp({ type: "run.retry" });
  }

  /** Without `steps` the server gives the run its configured step limit (AGENTWEB_MAX_STEPS). */
  continueRun(steps = null) {
    this.followUp(steps ? { type: "run.continue", steps } : { type: "run.continue" });
  }

  followUp(frame) {
    const thread = this.threadId();
    if (!thread) return;
    const ref = this.nextRef(frame.type === "run.retry" ? "retry" : "continue");
    if (!this.socket.send({ ...frame, thread, ref })) {
      this.view.notices.enableAction();
      this.composer.showError(NOT_CONNECTED);
      return;
    }
    this.followUps.add(ref);
  }

  /** Handles an `error` caused by one of these frames; returns false for any other error. */
  handleError(ev) {
    const ref = typeof ev.ref === "string" ? ev.ref : "";
    const code = ev.code || "";
    const message = typeof ev.message === "string" && ev.message ? ev.message : `Error: ${code || "unknown"}`;
    if (this.decisions.has(ref)) {
      const card = this.view.toolCard(this.decisions.get(ref));
      this.decisions.delete(ref);
      if (code === "already_decided") card?.approvalBlocked(ALREADY_DECIDED);
      else card?.approvalFailed(message);
      return true;
    }
    if (this.inputs.has(ref)) {
      const { toolCallId, request } = this.inputs.get(ref);
      this.inputs.delete(ref);
      const card = this.view.toolCard(toolCallId);
      if (code === "not_found") card?.inputBlocked(request, NOT_OPEN);
      else card?.inputFailed(request, message);
      return true;
    }
    if (this.followUps.has(ref)) {
      this.followUps.delete(ref);
      this.view.notices.enableAction();
      this.composer.showError(this.describe(code, message));
      if (code === "run_active") this.onRunActive();
      return true;
    }
    return false;
  }

  /**
   * After a reconnect nobody knows whether a decision in flight arrived: make its card usable again. If it did
   * arrive, the events that follow the resubscribe replace the card's buttons anyway.
   */
  reconnected() {
    for (const toolCallId of new Set(this.decisions.values())) {
      const card = this.view.toolCard(toolCallId);
      if (card?.approvalSending) card.approvalFailed(_("The connection dropped while sending. If nothing changes, decide again."));
    }
    for (const { toolCallId, request } of this.inputs.values()) {
      const card = this.view.toolCard(toolCallId);
      if (card?.inputSending) card.inputFailed(request, _("The connection dropped while sending. If the form stays, answer again."));
    }
    this.decisions.clear();
    this.inputs.clear();
    this.followUps.clear();
    this.view.notices.enableAction();
  }
}
