// One message as the page shows it (a user's bubble, or a segment of an assistant's answer) and the typing dots.
// Everything from the model or a person goes in as text (textContent, Text nodes, appendData): never through
// innerHTML; an answer's Markdown is built as DOM nodes by markdown.js.

import { el } from "./dom.js";
import { MarkdownStream, onCopyClick } from "./markdown.js";
import { structuredCard } from "./structured.js";
import { _ } from "./i18n.js";

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
