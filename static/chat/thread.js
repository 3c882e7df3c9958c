// The conversation on screen: applies a thread.snapshot (replacing everything) and live thread events to #messages,
// and keeps it scrolled to the bottom while the person has not scrolled up.

import { attachmentList } from "./attachments.js";
import { el } from "./dom.js";
import { MessageView, typingDots } from "./message-view.js";
import { ToolCardView } from "./tool-card.js";
import { AnswerView, answerOf } from "./answer.js";
import { RunNotices } from "./notices.js";
import { decisionText } from "./approval.js";
import { showMessageUsage } from "./usage.js";
import { summaryNote } from "./structured.js";
import { _ } from "./i18n.js";
import { insertOlder, outerOf } from "./pages.js";

const key = (id) => String(id);
/** Events name a message / tool call / run either by id or by an object with an `id`. */
export const idOf = (ref) => (ref !== null && typeof ref === "object" ? ref.id : ref);

// A snapshot's last messages built at once; older ones in chunks of OLDER_CHUNK between frames.
const FIRST_BATCH = 40;
const OLDER_CHUNK = 100;

/**
 * Where a turn starts at or before `index`: the index of a user message (or 0), so a batch of messages built
 * together never splits an answer across two batches.
 */
function turnStart(messages, index) {
  let i = Math.max(0, index);
  while (i > 0 && messages[i]?.role !== "user") i -= 1;
  return i;
}


const SCROLL_KEYS = new Set(["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", " "]);

/**
 * Follows the bottom of a scrolling element unless the person scrolled away from it.
 * Only a scroll that follows the person's own input (wheel, touch, keys, scrollbar) can unstick it: scroll events
 * caused by content changing size arrive a frame late and would otherwise look like scrolling up.
 *
 * It never reads layout after a write: a ResizeObserver on the scroller and on each of its children runs right
 * after the browser's own layout of a frame (before paint), where scrollHeight costs nothing, and scrolls there.
 * Writing `scrollTop = scrollHeight` from a script instead forces a layout of the whole conversation at once.
 */
export class AutoScroller {
  constructor(scroller, slack = 48) {
    this.scroller = scroller;
    this.slack = slack;
    this.stick = true;
    this.frame = 0;
    this.inputAt = -Infinity;
    const noteInput = () => { this.inputAt = performance.now(); };
    for (const type of ["wheel", "touchmove", "pointerdown"]) scroller.addEventListener(type, noteInput, { passive: true });
    scroller.addEventListener("keydown", (e) => { if (SCROLL_KEYS.has(e.key)) noteInput(); });
    scroller.addEventListener("scroll", () => {
      const byPerson = performance.now() - this.inputAt < 1500;
      if (this.stick && !byPerson) return; // our own following (or the content growing): nothing to decide
      const { scrollTop, scrollHeight, clientHeight } = scroller;
      if (scrollHeight - scrollTop - clientHeight <= this.slack) this.stick = true;
      else if (byPerson) this.stick = false;
    }, { passive: true });
    if (typeof ResizeObserver === "function") {
      this.resizes = new ResizeObserver(() => this.follow());
      this.resizes.observe(scroller);
      for (const child of scroller.children) this.resizes.observe(child);
      // Whoever adds a message, notice, or placeholder: its size is watched from then on.
      new MutationObserver((records) => {
        for (const r of records) {
          for (const n of r.addedNodes) if (n.nodeType === Node.ELEMENT_NODE) this.resizes.observe(n);
          for (const n of r.removedNodes) if (n.nodeType === Node.ELEMENT_NODE) this.resizes.unobserve(n);
        }
      }).observe(scroller, { childList: true });
    }
  }

  /** After a layout: to the bottom if following it. */
  follow() {
    if (!this.stick) return;
    const { scroller } = this;
    const bottom = scroller.scrollHeight - scroller.clientHeight;
    if (scroller.scrollTop < bottom - 1) scroller.scrollTop = bottom;
  }

  /** Call after content changed; scrolls (once per frame) if following the bottom. */
  changed() {
    if (!this.stick || this.frame || this.resizes) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.follow();
    });
  }

  /** Follows the bottom again from now on (and goes there at once). */
  toBottom() {
    this.stick = true;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.follow();
    });
  }
}

export class ThreadView {
  /**
   * @param {HTMLElement} container  #messages
   * @param {object} opts
   * @param {boolean} opts.isDemo
   * @param {(toolCallId: any, payload: object) => void} opts.onDecide  a person's decision on a waiting call
   * @param {() => void} opts.onRetry
   * @param {() => void} opts.onContinue  run.continue, for as many steps as the server's step limit
   * @param {number|null} opts.continueSteps  that limit (the chat's: its agent's, else AGENTWEB_MAX_STEPS), for the
   *   button's label
   * @param {(toolCallId: any) => Promise<object>} opts.loadArtifact  a tool call's stored artifact
   * @param {(name: string) => Promise<string|null>} opts.describeTool  a tool's description, for its cards
   * @param {(toolCallId: any, payload: object) => void} opts.onInput  an answer to a tool's request for input
   */
  constructor(container, {
    isDemo = false, onDecide = null, onRetry = () => {}, onContinue = () => {}, continueSteps = null, loadArtifact = null,
    describeTool = null, onInput = null,
  } = {}) {
    this.container = container;
    this.isDemo = isDemo;
    this.onDecide = onDecide;
    this.onInput = onInput;
    this.loadArtifact = loadArtifact;
    this.describeTool = describeTool;
    this.notices = new RunNotices({ append: (node) => this.append(node), onRetry, onContinue, continueSteps });
    this.scroll = new AutoScroller(container);
    this.emptyEl = container.querySelector(".empty-state") || this.makeEmptyState();
    this.messages = new Map();
    this.toolCards = new Map();
    this.generation = 0; // counts resets: chunks of an older snapshot stop
    // The server's first screen (the thread's last messages): show its end until the snapshot replaces it.
    if (container.querySelector("[data-prerendered]")) container.scrollTop = container.scrollHeight;
  }

  makeEmptyState() {
    const node = el("div", "empty-state");
    node.append(el("p", "", _("Start a conversation by typing below.")));
    return node;
  }

  append(node) {
    if (this.emptyEl.isConnected) this.emptyEl.remove();
    this.container.append(node);
    this.scroll.changed();
  }

  /**
   * Replaces the whole view with a snapshot. The last FIRST_BATCH messages are built at once (they fill the screen
   * and are what live events touch); older ones follow in chunks between frames, inserted above, so a long
   * thread's end shows without waiting for all of it.
   */
  reset(snapshot) {
    if (snapshot.model && typeof snapshot.model.is_demo === "boolean") this.isDemo = snapshot.model.is_demo;
    this.generation += 1;
    this.messages.clear();
    // Cards open now (opened by the person, or by themselves to show images) stay open in the new view: a snapshot
    // that follows the live events (a new thread's subscribe, a reconnect) must not fold them away.
    this.keptOpen = new Set([...this.toolCards].filter(([, card]) => card.root.open).map(([id]) => id));
    for (const card of this.toolCards.values()) card.dispose();
    this.toolCards.clear();
    this.container.replaceChildren();
    const messages = Array.isArray(snapshot.messages) ? snapshot.messages : [];
    // A paged snapshot (with `earlier`, pages.js) is built at once: a page of earlier messages goes in above it.
    const split = "earlier" in snapshot ? 0 : turnStart(messages, messages.length - FIRST_BATCH);
    for (const node of this.buildTurns(messages.slice(split))) this.append(node);
    this.summary = null;
    if (snapshot.summary) this.showSummary(snapshot.summary);
    this.notices.fromRun(snapshot.run);
    if (!messages.length && !this.container.firstChild) this.container.append(this.emptyEl);
    this.scroll.toBottom();
    if (split > 0) this.prependOlder(messages.slice(0, split), this.generation);
  }

  /**
   * The thread's summary of its older turns (snapshot `summary`, event thread.summarised): a note before the first
   * message after them (`before`), or at the end; one at a time. A message not built yet (an older chunk) gets it
   * when it is.
   */
  showSummary(summary) {
    if (!summary || typeof summary !== "object") return;
    this.summary?.node.remove();
    const node = summaryNote(summary);
    const before = summary.before ?? null;
    this.summary = { node, before };
    const view = before === null ? null : this.messages.get(key(before));
    if (view) outerOf(view).before(node);
    else if (before === null) this.append(node);
  }

  /** Builds older messages in chunks, newest chunk first, each inserted above what is there. */
  prependOlder(older, generation) {
    const later = window.requestIdleCallback
      ? (fn) => window.requestIdleCallback(fn, { timeout: 100 })
      : (fn) => setTimeout(fn, 0);
    const step = () => {
      if (generation !== this.generation || !older.length) return;
      // Above what is there; the person who scrolled up meanwhile keeps what they look at (pages.js).
      insertOlder(this, older.splice(turnStart(older, older.length - OLDER_CHUNK)));
      if (older.length) later(step);
    };
    later(step);
  }

  /**
   * Snapshot messages (whole turns) as the page's elements: each user message, and one answer per run of
   * consecutive assistant messages. Registered in `into`; not yet in the page.
   */
  buildTurns(messages, into = this.messages) {
    const nodes = [];
    let answer = null;
    for (const m of messages) {
      const view = this.buildMessage(m, into);
      if (view.role === "user") {
        answer = null;
        nodes.push(view.root);
        continue;
      }
      if (!answer) {
        answer = new AnswerView({ isDemo: this.isDemo });
        nodes.push(answer.root);
      }
      answer.add(view);
    }
    return nodes;
  }

  /** One snapshot message as a MessageView with its tool cards (registered in `into`, not in an answer yet). */
  buildMessage(m, into = this.messages) {
    const view = new MessageView({ id: m.id, role: m.role, content: m.content || "", status: m.status || "complete" });
    if (m.id !== null && m.id !== undefined) into.set(key(m.id), view);
    if (Array.isArray(m.attachments) && m.attachments.length) view.showAttachments(attachmentList(m.attachments));
    if (typeof m.reasoning === "string") view.appendReasoning(m.reasoning);
    if (m.finish_reason === "length") view.setNote(_("Cut off by the model's output limit."), "message-note");
    if (m.usage) showMessageUsage(view, m.usage);
    if (m.structured !== undefined) view.setStructured(m.structured);
    for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
      const card = this.addToolCard(view, call);
      if (call.args !== undefined && call.args !== null) card.setArgs(call.args);
      if (call.original_args !== undefined && call.original_args !== null) card.showEdited(call.original_args);
      if (call.decision) {
        const d = call.decision;
        card.showDecision(decisionText(d.decision, d.by || "", d.message || ""), d.decision);
      }
      if (["success", "error", "rejected", "replied", "cancelled"].includes(call.status)) {
        card.complete({
          status: call.status, content: call.content, durationMs: call.duration_ms, hasArtifact: call.has_artifact,
          images: Number.isInteger(call.images) ? call.images : 0,
        });
      } else if (call.status === "awaiting_approval") {
        card.askApproval(call.allow || null);
      } else if (call.status === "running") {
        // What the run holds of a running call (a page loaded while it runs): its progress, its open form.
        if (call.progress) card.setProgress(call.progress);
        if (call.input_request) card.askInput(call.input_request);
        if (call.connect_request) card.askConnect(call.connect_request);
      }
    }
    return view;
  }

  /**
   * A new message at the end of the conversation. An assistant message joins the answer of the current turn (the
   * last answer, when no user message came after it): a model call after a tool call, a retry, a continue.
   */
  addMessage(id, role, content = "", status = "streaming") {
    const view = new MessageView({ id, role, content, status });
    if (id !== null && id !== undefined) this.messages.set(key(id), view);
    this.place(view);
    return view;
  }

  /** Snapshot messages added at the end of the conversation (a branch shown, a message another tab sent), each
   * user message on its own and assistant messages in the current turn's answer, as addMessage places them. */
  appendMessages(messages) {
    for (const m of messages) {
      if (m && m.id !== undefined && m.id !== null && !this.messages.has(key(m.id))) this.place(this.buildMessage(m));
    }
  }

  /** Puts a built message at the end: a user message on its own, an assistant one in the current answer. */
  place(view) {
    if (view.role === "user") {
      this.append(view.root);
      return;
    }
    let answer = this.currentAnswer();
    if (!answer) {
      answer = new AnswerView({ isDemo: this.isDemo });
      this.append(answer.root);
    }
    answer.add(view);
    this.scroll.changed();
  }

  /** The conversation's last message is the person's: its answer has not started (nor failed: see app.js). */
  get awaitingAnswer() {
    let node = this.container.lastElementChild;
    while (node && !node.classList.contains("message")) node = node.previousElementSibling;
    return Boolean(node && node.classList.contains("user"));
  }

  /**
   * The sign that an answer is on its way, at the end of the conversation, until its first piece: a run waits for a
   * busy (or absent) run worker, or a model server that is slow to start. Called after every change (app.js
   * updateBusy), so that it stays last.
   */
  showStarting(on) {
    if (!on) {
      this.startingEl?.remove();
      return;
    }
    if (!this.startingEl) {
      this.startingEl = el("div", "answer-starting");
      this.startingEl.setAttribute("role", "status");
      this.startingEl.append(typingDots(), el("span", "visually-hidden", _("Waiting for the answer…")));
    }
    if (this.container.lastElementChild !== this.startingEl) this.append(this.startingEl);
  }

  /** The answer new assistant messages join: the last message element, if it is an answer. */
  currentAnswer() {
    let node = this.container.lastElementChild;
    while (node && !node.classList.contains("message")) node = node.previousElementSibling;
    return answerOf(node);
  }

  /** The optimistic bubble for what the person just sent. */
  addUserMessage(text, attachments = []) {
    const view = this.addMessage(null, "user", text, "complete");
    if (attachments.length) view.showAttachments(attachmentList(attachments));
    return view;
  }

  /** The assistant message an event refers to, created if the view missed its message.started. */
  message(id) {
    return this.messages.get(key(id)) || this.addMessage(id, "assistant", "", "streaming");
  }

  addToolCard(messageView, call) {
    const card = new ToolCardView({
      id: call.id,
      name: call.name,
      callId: call.call_id,
      status: call.status || "streaming",
      onDecide: this.onDecide,
      onInput: this.onInput,
      loadArtifact: this.loadArtifact,
      describe: this.describeTool,
    });
    this.toolCards.set(key(call.id), card);
    messageView.addToolCard(card);
    if (this.keptOpen && this.keptOpen.has(key(call.id))) card.root.open = true;
    this.scroll.changed();
    return card;
  }

  toolCard(id) {
    return this.toolCards.get(key(id)) || null;
  }

  /** Removes typing indicators when a run ends without completing every message. */
  finishStreaming(status = "cancelled") {
    for (const view of this.messages.values()) {
      if (!view.streaming) continue;
      if (status === "cancelled") {
        view.setStatus("cancelled");
      } else {
        view.stopTyping();
        view.root.dataset.status = status;
        view.answer?.changed();
      }
    }
  }

  /** Gives a bubble shown before the server knew it (the optimistic user message) its server id. */
  adopt(view, id) {
    view.id = id;
    view.root.dataset.messageId = String(id);
    this.messages.set(key(id), view);
  }

  /** Takes a message out again (a send the server refused, a rewind); an answer left empty goes too. */
  remove(view) {
    this.showStarting(false); // the caller's updateBusy puts it back if an answer is still awaited
    const answer = view.answer;
    if (answer) {
      if (answer.remove(view)) answer.root.remove();
    } else view.root.remove();
    if (view.id !== null && view.id !== undefined) this.messages.delete(key(view.id));
    // Elements, not nodes: the server's empty chat leaves whitespace around its empty state, which must come back
    // (with the agents and the starting prompts in it) when a refused first message goes.
    if (!this.container.firstElementChild) this.container.append(this.emptyEl);
  }

  /** Applies one live thread event (already checked for order). Returns false for types it does not know. */
  apply(ev) {
    switch (ev.type) {
      case "message.started": {
        const m = ev.message || {};
        if (!this.messages.has(key(idOf(m)))) this.addMessage(idOf(m), m.role || "assistant", "", "streaming");
        return true;
      }
      case "message.delta":
        this.message(idOf(ev.message)).appendText(typeof ev.text === "string" ? ev.text : "");
        this.scroll.changed();
        return true;
      case "message.reasoning_delta":
        this.message(idOf(ev.message)).appendReasoning(typeof ev.text === "string" ? ev.text : "");
        return true;
      case "message.completed": {
        const view = this.message(idOf(ev.message));
        view.complete(ev.content, ev.status);
        if (ev.usage) showMessageUsage(view, ev.usage);
        if (ev.structured !== undefined) view.setStructured(ev.structured);
        this.scroll.changed();
        return true;
      }
      case "tool_call.started": {
        const call = ev.tool_call || {};
        if (!this.toolCard(call.id)) {
          const owner = call.message !== undefined ? this.message(call.message) : this.lastAssistant();
          this.addToolCard(owner, { ...call, status: "streaming" });
        }
        return true;
      }
      case "tool_call.args_delta":
        this.withCard(ev, (card) => card.appendArgs(typeof ev.text === "string" ? ev.text : ""));
        return true;
      case "tool_call.requested":
        this.withCard(ev, (card) => {
          card.setArgs(ev.args);
          card.setStatus("requested");
        });
        return true;
      case "tool_call.awaiting_approval":
        this.withCard(ev, (card) => card.askApproval(ev.allow || null));
        return true;
      case "tool_call.running":
        this.withCard(ev, (card) => card.setStatus("running"));
        return true;
      case "tool_call.completed":
        this.withCard(ev, (card) => card.complete({
          status: ev.status, content: ev.content, durationMs: ev.duration_ms, hasArtifact: ev.has_artifact,
          images: typeof ev.images === "number" ? ev.images : 0,
        }));
        return true;
      case "tool_call.progress":
        this.withCard(ev, (card) => card.setProgress(ev));
        return true;
      case "tool_call.input_requested":
        this.withCard(ev, (card) => card.askInput(ev));
        return true;
      case "tool_call.connect_requested":
        this.withCard(ev, (card) => card.askConnect(ev));
        return true;
      case "tool_call.input_answered":
        this.withCard(ev, (card) => card.inputAnswered(ev));
        return true;
      case "tool_call.decided":
        this.withCard(ev, (card) => card.decided(ev));
        return true;
      case "run.started":
        this.notices.clear(); // the waiting notice (resumed) or a retry / continue offer: all stale now
        return true;
      case "run.waiting":
        this.notices.waiting();
        return true;
      case "run.completed":
        this.finishStreaming("complete");
        if (ev.reason === "max_steps") this.notices.maxSteps();
        else this.notices.clear();
        return true;
      case "run.failed":
        this.finishStreaming("error");
        this.notices.failed(ev.error);
        return true;
      case "run.cancelled":
        this.finishStreaming("cancelled");
        this.notices.cancelled();
        return true;
      default:
        return false;
    }
  }

  withCard(ev, fn) {
    const card = this.toolCard(idOf(ev.tool_call));
    if (card) {
      fn(card);
      this.scroll.changed();
    }
  }

  lastAssistant() {
    const views = [...this.messages.values()].filter((v) => v.role === "assistant");
    return views.length ? views[views.length - 1] : this.addMessage(null, "assistant", "", "streaming");
  }
}
