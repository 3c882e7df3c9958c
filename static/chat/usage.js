// What each answer cost, the thread's total, and how full the model's context is before sending (docs/usage.md).
// The numbers are the server's (message.completed / run.completed / snapshot `usage`); "≈" marks an estimate.

import { el } from "./render.js";

/** 842, "12.3 k", "1.25 M". */
export function formatTokens(n) {
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return "0";
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)} k`;
  return `${(n / 1_000_000).toFixed(2)} M`;
}

/** A cost as the server sent it (a decimal string), with at most four significant decimals. */
export function formatCost(cost) {
  const value = Number(cost);
  if (cost === null || cost === undefined || !Number.isFinite(value)) return "";
  if (value === 0) return "0";
  if (value >= 1) return value.toFixed(2);
  return value.toPrecision(2).replace(/0+$/, "").replace(/\.$/, "");
}

/** "1.2 k in · 85 out · cost 0.0035", with "≈ " in front when estimated. */
export function usageText(usage) {
  if (!usage || typeof usage !== "object") return "";
  const parts = [`${formatTokens(usage.input_tokens)} in`, `${formatTokens(usage.output_tokens)} out`];
  const cost = formatCost(usage.cost);
  if (cost) parts.push(`cost ${cost}`);
  return `${usage.estimated ? "≈ " : ""}${parts.join(" · ")}`;
}

export function usageTitle(usage) {
  if (!usage || typeof usage !== "object") return "";
  const exact = (n) => (typeof n === "number" ? n.toLocaleString() : "0");
  let title = `${exact(usage.input_tokens)} input tokens, ${exact(usage.output_tokens)} output tokens`;
  if (usage.cost !== null && usage.cost !== undefined) title += `, cost ${usage.cost}`;
  if (usage.estimated) title += ". Estimated: the model server did not count them (about four characters a token)";
  return title;
}

/** The quiet line under an answer. */
export function showMessageUsage(messageView, usage) {
  if (!usage || typeof usage !== "object") return;
  let line = messageView.usageEl;
  if (!line) {
    line = messageView.usageEl = el("p", "message-usage");
    messageView.root.append(line);
  }
  line.textContent = usageText(usage);
  line.title = usageTitle(usage);
  line.dataset.estimated = usage.estimated ? "true" : "false";
}

/**
 * The thread's total (the top bar) and the context gauge (the composer): kept from each answer's usage by message id,
 * in the conversation's order. The gauge is the last answer's input and output (what the next request sends again)
 * plus the draft at about four characters a token, against the model's context window.
 */
export class UsageMeter {
  constructor({ totalEl, gaugeEl, input }) {
    Object.assign(this, { totalEl, gaugeEl, input });
    this.byMessage = new Map();
    this.window = null;
    input?.addEventListener("input", () => this.showGauge());
  }

  reset(messages) {
    this.byMessage.clear();
    for (const m of Array.isArray(messages) ? messages : []) {
      if (m && m.role === "assistant" && m.usage) this.byMessage.set(String(m.id), m.usage);
    }
    this.show();
  }

  add(messageId, usage) {
    if (!usage || typeof usage !== "object") return;
    this.byMessage.set(String(messageId), usage);
    this.show();
  }

  removed(ids) {
    for (const id of Array.isArray(ids) ? ids : []) this.byMessage.delete(String(id));
    this.show();
  }

  setModel(info) {
    const window = Number(info?.context_window);
    this.window = Number.isFinite(window) && window > 0 ? window : null;
    this.showGauge();
  }

  clear() {
    this.byMessage.clear();
    this.show();
  }

  show() {
    this.showTotal();
    this.showGauge();
  }

  showTotal() {
    if (!this.totalEl) return;
    const total = { input_tokens: 0, output_tokens: 0, estimated: false, cost: null };
    let cost = null;
    for (const u of this.byMessage.values()) {
      total.input_tokens += Number(u.input_tokens) || 0;
      total.output_tokens += Number(u.output_tokens) || 0;
      total.estimated ||= Boolean(u.estimated);
      if (u.cost !== null && u.cost !== undefined) cost = (cost || 0) + Number(u.cost);
    }
    total.cost = cost === null ? null : String(cost);
    this.totalEl.hidden = this.byMessage.size === 0;
    const tokens = total.input_tokens + total.output_tokens;
    const costText = formatCost(total.cost);
    this.totalEl.textContent = `${total.estimated ? "≈ " : ""}${formatTokens(tokens)} tokens${costText ? ` · ${costText}` : ""}`;
    this.totalEl.title = `This conversation so far: ${usageTitle(total)}`;
  }

  showGauge() {
    if (!this.gaugeEl) return;
    if (!this.window) {
      this.gaugeEl.hidden = true;
      return;
    }
    const last = [...this.byMessage.values()].pop();
    const history = last ? (Number(last.input_tokens) || 0) + (Number(last.output_tokens) || 0) : 0;
    const draft = Math.ceil((this.input?.value.length || 0) / 4);
    const used = history + draft;
    const share = used / this.window;
    this.gaugeEl.hidden = used === 0;
    this.gaugeEl.textContent = `${formatTokens(used)} / ${formatTokens(this.window)}`;
    this.gaugeEl.dataset.level = share >= 0.9 ? "full" : share >= 0.7 ? "high" : "ok";
    this.gaugeEl.title = `About ${used.toLocaleString()} of the model's ${this.window.toLocaleString()}-token context`
      + " window: the conversation so far and your draft. Past it, the oldest messages are left out.";
  }
}
