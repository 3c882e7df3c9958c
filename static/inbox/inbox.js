// The approvals inbox (/inbox): every call waiting for the person's decision and every tool's open request for
// their input, across all their threads, each on the chat's own tool card (static/chat/tool-card.js ToolCardView) with
// its controls. Decisions and answers go out over the chat socket as the thread page sends them
// (`tool_call.decide`, `tool_call.input`); `inbox.changed` (to all the person's sockets) says when something starts
// or stops waiting anywhere, and the list is read again (GET /inbox/items). What the server sends is text: it goes
// in through textContent only.

import { ChatSocket } from "../chat/socket.js";
import { ToolCardView } from "../chat/tool-card.js";
import { el } from "../chat/dom.js";
import { setCount } from "./count.js";
import { _, format, locale } from "../chat/i18n.js";

const NOT_CONNECTED = _("Not connected — try again in a moment.");
const ALREADY_DECIDED = _("Already decided — in the chat or another tab. Its decision stands.");
const NOT_OPEN = _("This request is no longer open (answered elsewhere, or it timed out).");
const CONNECTION_LABELS = { connecting: _("connecting…"), connected: _("live"), reconnecting: _("reconnecting…"),
  "signed-out": _("signed out — reload to sign in") };
const SOURCE_LABELS = {
  api: [_("API"), _("Started by the API")],
  schedule: [_("Schedule"), _("Started by a schedule")],
  trigger: [_("Trigger"), _("Started by a trigger")],
};

const root = document.getElementById("inbox");
const list = document.getElementById("inbox-list");
const empty = document.getElementById("inbox-empty");
const connectionEl = document.getElementById("connection-state");
const itemsUrl = root.dataset.itemsUrl;

/** tool call id → {item, card, li, done, sent} */
const shown = new Map();
const refs = new Map(); // a frame's ref → {toolCall, kind, request?}
let counter = 0;
let reading = null;
let readAgain = false;

function readItems() {
  const node = document.getElementById("inbox-items");
  try {
    return JSON.parse(node ? node.textContent : "[]") || [];
  } catch {
    return [];
  }
}

const socket = new ChatSocket({
  onEvent: handleEvent,
  onOpen: (reconnected) => {
    socket.send({ type: "inbox.subscribe" });
    if (reconnected) refresh(); // what changed while the socket was down
  },
  onState(name) {
    connectionEl.dataset.state = name;
    connectionEl.textContent = CONNECTION_LABELS[name] || name;
  },
});

function nextRef(prefix) {
  counter += 1;
  return `inbox-${prefix}-${counter}`;
}

function decide(toolCall, payload) {
  const entry = shown.get(toolCall);
  if (!entry) return;
  const ref = nextRef("decide");
  if (!socket.send({ type: "tool_call.decide", tool_call: toolCall, ...payload, ref })) {
    entry.card.approvalFailed(NOT_CONNECTED);
    return;
  }
  entry.sent = { ...payload, originalArgs: entry.item.args };
  refs.set(ref, { toolCall, kind: "decide" });
}

function answer(toolCall, payload) {
  const entry = shown.get(toolCall);
  if (!entry) return;
  const ref = nextRef("input");
  const frame = { type: "tool_call.input", thread: entry.item.thread.id, tool_call: toolCall, ...payload, ref };
  if (!socket.send(frame)) {
    entry.card.inputFailed(payload.request, NOT_CONNECTED);
    return;
  }
  refs.set(ref, { toolCall, kind: "input", request: String(payload.request) });
}

/** One item: who asks (agent, tool), where (the thread, linked), when, and the card with its controls. */
function render(item) {
  const li = el("li", "inbox-item");
  li.dataset.toolCall = item.tool_call;
  li.dataset.kind = item.kind;
  const head = el("div", "inbox-item-head");
  const what = el("p", "inbox-item-what");
  what.append(el("span", "inbox-agent", item.agent ? item.agent.name : _("No agent")), " · ",
    el("span", "inbox-tool", item.tool || _("tool")));
  const where = el("p", "inbox-item-where");
  const link = el("a", "inbox-thread-link", item.thread.title || _("New chat"));
  link.href = item.thread.url;
  where.append(link);
  const source = Object.hasOwn(SOURCE_LABELS, item.thread.source) ? SOURCE_LABELS[item.thread.source] : null;
  if (source) {
    const badge = el("span", "badge thread-source", source[0]);
    badge.title = source[1];
    where.append(" ", badge);
  }
  const when = el("time", "inbox-when", formatWhen(item.at));
  when.dateTime = item.at;
  when.title = new Date(item.at).toLocaleString();
  where.append(" ", when);
  head.append(what, where);

  const status = item.kind === "approval" ? "awaiting_approval" : "running";
  const card = new ToolCardView({
    id: item.tool_call,
    name: item.tool,
    status,
    onDecide: (id, payload) => decide(String(id), payload),
    onInput: (id, payload) => answer(String(id), payload),
  });
  if (item.kind === "approval") {
    card.setArgs(item.args);
    card.askApproval(item.allow);
  } else {
    card.argsSection.hidden = true; // the arguments are the thread's to show; the request is what waits here
    card.askInput({ request: item.request, message: item.message, schema: item.schema });
  }
  card.root.open = true;
  li.append(head, card.root);
  return { item, card, li, done: false, sent: null };
}

function formatWhen(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const today = new Date();
  const sameDay = date.toDateString() === today.toDateString();
  return sameDay
    ? date.toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleString(locale(), { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** The server's list, newest first: new items are added in their place; items shown that are no longer waiting and
 * were not closed by an event stay, marked done, until the page is left. */
function apply(items) {
  const fresh = new Set();
  let before = list.firstChild;
  for (const item of items) {
    fresh.add(item.tool_call);
    let entry = shown.get(item.tool_call);
    if (entry && entry.item.kind === "input" && item.kind === "input" && entry.item.request !== item.request) {
      entry.li.remove(); // asked again (a new request on the same call)
      shown.delete(item.tool_call);
      entry = null;
    }
    if (!entry) {
      entry = render(item);
      shown.set(item.tool_call, entry);
      list.insertBefore(entry.li, before);
    }
    before = entry.li.nextSibling;
  }
  for (const [id, entry] of shown) {
    if (!fresh.has(id) && !entry.done) finish(entry, null);
  }
  update();
}

function update() {
  const waiting = [...shown.values()].filter((entry) => !entry.done).length;
  setCount(waiting);
  empty.hidden = shown.size > 0;
  list.hidden = shown.size === 0;
}

/** The item stopped waiting: its card says how (a decision, an answer, a Stop), its controls go. */
function finish(entry, ev) {
  entry.done = true;
  entry.li.dataset.done = "true";
  const { card, item } = entry;
  if (item.kind === "approval") {
    if (ev && ev.change === "decided") {
      const mine = entry.sent && entry.sent.decision === ev.decision ? entry.sent : null;
      const edited = ev.decision === "edit" && mine ? { args: mine.args, original_args: mine.originalArgs } : {};
      card.decided({ decision: ev.decision, by: ev.by, message: mine ? mine.message : undefined, ...edited });
    } else {
      card.closeApproval();
      card.showDecision(ev && ev.change === "cancelled"
        ? _("Not run: the run was stopped.") : _("No longer waiting (decided or stopped elsewhere)."), "");
      card.setStatus("cancelled");
    }
  } else if (ev && ev.change === "input_closed") {
    card.inputAnswered({ request: item.request, action: ev.decision, by: ev.by });
  } else {
    card.closeInput();
    card.showDecision(_("No longer open (answered, cancelled, or its call ended)."), "");
  }
  update();
}

async function refresh() {
  if (reading) {
    readAgain = true;
    return reading;
  }
  reading = (async () => {
    try {
      const response = await fetch(itemsUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.ok) apply((await response.json()).items || []);
    } catch {
      // offline: the socket's reconnect reads it again
    } finally {
      reading = null;
      if (readAgain) {
        readAgain = false;
        refresh();
      }
    }
  })();
  return reading;
}

function handleEvent(ev) {
  switch (ev.type) {
    case "inbox.changed":
      handleChange(ev);
      return;
    case "thread.deleted":
      refresh();
      return;
    case "error":
      handleError(ev);
      return;
    default:
  }
}

function handleChange(ev) {
  const closing = ["decided", "cancelled", "input_closed"].includes(ev.change);
  if (closing) {
    for (const id of Array.isArray(ev.tool_calls) ? ev.tool_calls : []) {
      const entry = shown.get(String(id));
      if (entry && !entry.done) finish(entry, ev);
    }
    return;
  }
  refresh();
}

function handleError(ev) {
  const sent = ev.ref ? refs.get(ev.ref) : null;
  if (!sent) return;
  refs.delete(ev.ref);
  const entry = shown.get(sent.toolCall);
  if (!entry) return;
  const code = ev.code || "";
  if (sent.kind === "decide") {
    entry.sent = null;
    if (code === "already_decided" || code === "not_found") entry.card.approvalBlocked(ALREADY_DECIDED);
    else entry.card.approvalFailed(ev.message || format(_("Error: %(code)s"), { code }));
  } else if (code === "not_found") {
    entry.card.inputBlocked(sent.request, NOT_OPEN);
  } else {
    entry.card.inputFailed(sent.request, ev.message || format(_("Error: %(code)s"), { code }));
  }
}

list.replaceChildren(); // the server's plain list, replaced by the cards
apply(readItems());
socket.start();
