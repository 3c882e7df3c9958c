// What each answer cost, the thread's total, and how full the model's context is before sending (docs/usage.md).
// The numbers are the server's (message.completed / run.completed / snapshot `usage`); "≈" marks an estimate.

import { el } from "./dom.js";

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

/** A model call's usage (message.completed / snapshot `usage`), shown in the line of the answer it belongs to. */
export function showMessageUsage(messageView, usage) {
  if (!usage || typeof usage !== "object") return;
  messageView.usage = usage;
  messageView.answer?.showUsage();
}

/** The sum of several usages: tokens added, the cost if any has one, estimated if any is. */
export function sumUsage(usages) {
  const total = { input_tokens: 0, output_tokens: 0, estimated: false, cost: null };
  let cost = null;
  for (const u of usages) {
    total.input_tokens += Number(u.input_tokens) || 0;
    total.output_tokens += Number(u.output_tokens) || 0;
    total.estimated ||= Boolean(u.estimated);
    if (u.cost !== null && u.cost !== undefined) cost = (cost || 0) + Number(u.cost);
  }
  // Decimal strings added as floats: rounded back to 12 significant digits, so 0.1 + 0.2 reads 0.3.
  total.cost = cost === null ? null : String(Number(cost.toPrecision(12)));
  return total;
}

/**
 * The quiet line at an answer's foot: what its model calls cost together (each call sends the conversation again,
 * so their input tokens add up). One call: the line (p.message-usage), its exact numbers in the tooltip. Several:
 * the sum and how many calls, and the line opens (a click, Enter) onto each call's numbers, in order, so they are
 * there on a phone too. Null without any usage.
 */
export function answerUsage(usages) {
  if (!usages.length) return null;
  const total = usages.length === 1 ? usages[0] : sumUsage(usages);
  const line = el("p", "message-usage", usageText(total));
  line.title = usageTitle(total);
  line.dataset.estimated = total.estimated ? "true" : "false";
  if (usages.length === 1) return line;
  line.textContent += ` · ${usages.length} calls`;
  line.title = `${usages.length} model calls: ${line.title}`;
  const details = el("details", "usage-detail");
  const summary = el("summary", "usage-summary");
  summary.append(line);
  const calls = el("ol", "usage-calls");
  for (const u of usages) {
    const item = el("li", "usage-call", usageText(u));
    item.title = usageTitle(u);
    calls.append(item);
  }
  details.append(summary, calls);
  return details;
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

  /** A snapshot's messages; `partial`: earlier ones are not loaded yet (a paged snapshot), the total says so. */
  reset(messages, partial = false) {
    this.byMessage.clear();
    this.partial = partial;
    for (const m of Array.isArray(messages) ? messages : []) {
      if (m && m.role === "assistant" && m.usage) this.byMessage.set(String(m.id), m.usage);
    }
    this.show();
  }

  /** A page of earlier messages (pages.js), before those known; `partial`: still more before them. */
  addEarlier(messages, partial) {
    const older = new Map();
    for (const m of Array.isArray(messages) ? messages : []) {
      if (m && m.role === "assistant" && m.usage) older.set(String(m.id), m.usage);
    }
    this.byMessage = new Map([...older, ...this.byMessage]); // the gauge reads the last one
    this.partial = partial;
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
    const total = sumUsage(this.byMessage.values());
    this.totalEl.hidden = this.byMessage.size === 0;
    const tokens = total.input_tokens + total.output_tokens;
    const costText = formatCost(total.cost);
    // With earlier messages not loaded yet, the sum of those loaded: "at least".
    const more = this.partial ? "+" : "";
    this.totalEl.textContent = `${total.estimated ? "≈ " : ""}${formatTokens(tokens)}${more} tokens${costText ? ` · ${costText}${more}` : ""}`;
    this.totalEl.title = this.partial
      ? `The messages loaded so far (scroll up for earlier ones): ${usageTitle(total)}`
      : `This conversation so far: ${usageTitle(total)}`;
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
