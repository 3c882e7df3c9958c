// Entry point of the chat page: its state and parts, sending and stopping; the server's events are events.js's.
// Decisions on tool calls and retry / continue go through actions.js.

import { ChatSocket } from "./socket.js";
import { ThreadView, idOf } from "./thread.js";
import { Composer } from "./composer.js";
import { Sidebar } from "./thread-list.js";
import { Actions } from "./actions.js";
import { ModelPicker } from "./models.js";
import { SidebarActions } from "./sidebar.js";
import { TurnControls } from "./versions.js";
import { ToolCatalog, ToolSwitches, ToolsPanel, fetchArtifact } from "./tools.js";
import { UsageMeter } from "./usage.js";
import { AgentChoice, AgentFilter, AgentLabel } from "./agents.js";
import { AttachmentTray } from "./attachments.js";
import { Starters } from "./starters.js";
import { refreshCount } from "../inbox/count.js";
import { _ } from "./i18n.js";
import { Announcer } from "./announce.js";
import { threadEvents } from "./events.js";
import { setUpPage } from "./page.js";
import { EarlierPages, fetchPage } from "./pages.js";

const RUN_ACTIVE_MESSAGE = _("Wait for the current answer to finish (or press Stop).");
const CONNECTION_LABELS = {
  connecting: _("connecting…"),
  connected: _("connected"),
  reconnecting: _("reconnecting…"),
  "signed-out": _("signed out — reload the page to sign in"),
};
const URL_PLACEHOLDER = "00000000-0000-0000-0000-000000000000";
const CALL_PLACEHOLDER = "ffffffff-ffff-ffff-ffff-ffffffffffff";

function readJson(id, fallback) {
  const node = document.getElementById(id);
  if (!node) return fallback;
  try {
    return JSON.parse(node.textContent);
  } catch {
    return fallback;
  }
}

/** crypto.randomUUID exists only in secure contexts (https, localhost); plain-http LAN hosts need the fallback. */
function newUuid() {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const $ = (id) => document.getElementById(id);
const appEl = $("app");
const modelInfo = readJson("model-info", {}) || {};
const threadUrlTemplate = appEl?.dataset.threadUrl || `/t/${URL_PLACEHOLDER}/`;
const threadUrl = (id) => threadUrlTemplate.replace(URL_PLACEHOLDER, encodeURIComponent(id));
const artifactUrl = (threadId, toolCallId) => (appEl?.dataset.artifactUrl || "")
  .replace(URL_PLACEHOLDER, encodeURIComponent(threadId))
  .replace(CALL_PLACEHOLDER, encodeURIComponent(toolCallId));
const messagesUrl = (threadId, before) => `${(appEl?.dataset.messagesUrl || `/t/${URL_PLACEHOLDER}/messages`)
  .replace(URL_PLACEHOLDER, encodeURIComponent(threadId))}?before=${encodeURIComponent(before)}`;
const toolCatalog = new ToolCatalog(appEl?.dataset.toolsUrl || "", appEl?.dataset.threadAgent || "");

const state = {
  threadId: readJson("thread-id", "") || null,
  lastSeq: null, // seq of the last applied event of the current thread
  awaitingSnapshot: false, // a subscribe with after_seq null is out: live events wait for its snapshot
  subscribeRef: null,
  runActive: false, // running or waiting for an approval
  pending: null, // the sent user message the server has not confirmed yet
  connection: 0, // counts socket opens
  refCounter: 0,
};
const nextRef = (prefix) => `${prefix}-${++state.refCounter}`;
const announcer = new Announcer($("announcer"), $("messages"));

const view = new ThreadView($("messages"), {
  isDemo: Boolean(modelInfo.is_demo),
  onDecide: (toolCallId, payload) => actions.decide(toolCallId, payload),
  onInput: (toolCallId, payload) => actions.answerInput(toolCallId, payload),
  onRetry: () => actions.retry(),
  onContinue: () => actions.continueRun(),
  continueSteps: Number.parseInt(appEl?.dataset.maxSteps || "", 10) || null,
  loadArtifact: (toolCallId) => (state.threadId && appEl?.dataset.artifactUrl
    ? fetchArtifact(artifactUrl(state.threadId, toolCallId))
    : Promise.reject(new Error(_("The artifact cannot be loaded here.")))),
  describeTool: (name) => toolCatalog.description(name),
});
// The tools turned off for this chat: a stored chat's change is sent at once, a new chat's goes with its first message.
const toolSwitches = new ToolSwitches({
  button: $("tools-toggle"),
  countEl: $("tools-off-count"),
  lockedEl: $("tools-locked"),
  send(name, enabled) {
    if (!state.threadId) return null;
    const ref = nextRef("tool");
    return socket.send({ type: "thread.set_tool", thread: state.threadId, tool: name, enabled, ref }) ? ref : false;
  },
  onError: (message) => (toolsPanel?.isOpen ? toolsPanel.setStatus(message, "error") : composer.showError(message)),
});
const toolsPanel = $("tools-toggle")
  ? new ToolsPanel({
    button: $("tools-toggle"),
    panel: $("tools-panel"),
    list: $("tools-list"),
    status: $("tools-status"),
    closeButton: $("tools-close"),
    catalog: toolCatalog,
    switches: toolSwitches,
  })
  : null;
const sidebar = new Sidebar($("sidebar"), $("thread-list"), null, threadUrl); // its toggle: page.js (a drawer)
setUpPage(view);
const sidebarActions = new SidebarActions({
  root: $("sidebar"),
  list: $("thread-list"),
  homeUrl: $("new-chat")?.getAttribute("href") || "/",
  hrefFor: threadUrl,
  currentId: () => state.threadId,
});
// The empty chat's starting prompts: a click sends one as the first message (composer.js submits the same way).
const starters = new Starters({
  root: $("starters"),
  prompts: readJson("starter-prompts", null),
  onPick: (text) => sendMessage(text),
});
const agentLabel = new AgentLabel($("agent-label"));
const agentChoice = new AgentChoice($("agent-choices"), (slug) => {
  agentLabel.show(agentChoice.info); // the empty chat names its agent at once, as a stored chat does
  picker.follow(agentChoice.model); // its onShow shows the agent's starting prompts too
  starters.show({ agent: slug, isDemo: picker.isDemo });
  toolCatalog.setAgent(slug || "");
});
const agentFilter = new AgentFilter($("agent-filter"), $("thread-list"));
// A new thread's agent goes with its first message (used only when the message creates the thread).
const newThreadAgent = () => (state.threadId ? undefined : agentChoice.value);
const turns = new TurnControls({
  container: $("messages"),
  onRegenerate: () => changeBranch({ type: "run.regenerate" }),
  onEdit: (message, content) => changeBranch({ type: "message.edit", message, content, client_msg_id: newUuid() }),
  onSwitch: (message, to) => changeBranch({ type: "message.switch_version", message, to }),
});
const composer = new Composer({
  form: $("composer"),
  input: $("composer-input"),
  sendButton: $("send"),
  stopButton: $("stop"),
  errorEl: $("composer-error"),
  onSubmit: sendMessage,
  onStop: stopRun,
  hasFiles: () => tray.ids().length > 0 || tray.uploading,
});
const tray = new AttachmentTray({
  form: $("composer"),
  input: $("composer-input"),
  button: $("attach"),
  fileInput: $("attach-input"),
  list: $("attachment-chips"),
  onError: (message) => composer.showError(message),
});
const connectionEl = $("connection-state");
// Earlier pages of a long conversation, loaded as the person scrolls up (pages.js).
const pages = new EarlierPages({
  view,
  load: (before) => fetchPage(messagesUrl(state.threadId, before)),
  onLoaded(messages) {
    turns.remember(messages);
    usageMeter.addEarlier(messages, pages.cursor !== null);
    updateBusy();
  },
  onStale: () => subscribe(null),
});

const socket = new ChatSocket({
  onEvent: (ev) => handleEvent(ev), // events.js, set up once every part exists
  onOpen: handleOpen,
  onTooLarge: handleTooLarge,
  onState(name) {
    connectionEl.dataset.state = name;
    connectionEl.textContent = CONNECTION_LABELS[name] || name;
  },
});

const describeError = (code, message) => (code === "run_active" ? RUN_ACTIVE_MESSAGE : message);
const actions = new Actions({
  socket,
  view,
  composer,
  threadId: () => state.threadId,
  describe: describeError,
  onRunActive: () => subscribe(null),
});
const usageMeter = new UsageMeter({ totalEl: $("thread-usage"), gaugeEl: $("context-gauge"), input: $("composer-input") });
const picker = new ModelPicker({
  select: $("model-picker"),
  label: $("model-label"),
  banner: $("demo-banner"),
  models: readJson("available-models", []),
  current: modelInfo,
  onPick(id) {
    if (!state.threadId) return null; // a new chat: the choice goes with the first message
    const ref = nextRef("model");
    return socket.send({ type: "thread.set_model", thread: state.threadId, model: id, ref }) ? ref : false;
  },
  onShow: (info) => {
    view.isDemo = Boolean(info.is_demo);
    usageMeter.setModel(info);
    starters.show({ agent: agentChoice.value, isDemo: Boolean(info.is_demo) });
  },
});
if (!state.threadId) {
  toolCatalog.setAgent(agentChoice.value || "");
  picker.follow(agentChoice.model); // the default agent's model
  agentLabel.show(agentChoice.info);
}
// A new thread's model goes with its first message when the person picked one (else the thread takes its agent's,
// or the default), and so do the tools switched off in its panel.
const newThreadModel = () => (state.threadId || !picker.sendsChoice ? undefined : picker.value);
const newThreadTools = () => (state.threadId ? [] : toolSwitches.names);

function updateBusy() {
  // Until the first snapshot of an open thread is in, a send could not be matched against it: wait for it.
  const loading = state.threadId !== null && state.lastSeq === null && state.awaitingSnapshot;
  composer.setBusy(state.runActive || state.pending !== null || loading, state.runActive && state.threadId !== null);
  toolSwitches.lock(state.runActive || state.pending !== null || loading);
  turns.update(state.runActive || state.pending !== null || loading || !state.threadId);
  // A message sent (or a run going) whose answer has not started: the dots at once, whatever keeps the answer
  // (a run worker, the model server); a failure's notice replaces them.
  view.showStarting((state.runActive || state.pending !== null) && view.awaitingAnswer && !view.notices.kind);
}

/** run.regenerate / message.edit / message.switch_version: the server answers with thread.branch_changed (then, but
 * for a switch, the run's events). */
function changeBranch(frame) {
  if (!state.threadId || state.runActive || state.pending) return false;
  if (!socket.send({ ...frame, thread: state.threadId, ref: nextRef("branch") })) {
    composer.showError(_("Not connected — reconnecting. Try again in a moment."));
    return false;
  }
  return true;
}

function subscribe(afterSeq) {
  if (!state.threadId) return;
  state.awaitingSnapshot = afterSeq === null;
  state.subscribeRef = nextRef("subscribe");
  // paged: a snapshot of the newest messages and a cursor for the earlier ones (pages.js loads them)
  const frame = { type: "thread.subscribe", thread: state.threadId, after_seq: afterSeq, paged: true };
  socket.send({ ...frame, ref: state.subscribeRef });
  updateBusy();
}

function handleOpen() {
  state.connection += 1;
  socket.send({ type: "inbox.subscribe" }); // the top bar's count follows the person's inbox
  if (state.connection > 1) refreshCount(); // what changed while the socket was down
  if (state.connection > 1) actions.reconnected();
  if (state.threadId) {
    subscribe(state.lastSeq);
  } else if (state.pending) {
    resendPending(); // a first message whose new thread never came back
  }
}

function sendMessage(text) {
  if (state.runActive || state.pending) {
    composer.showError(RUN_ACTIVE_MESSAGE);
    return false;
  }
  if (state.threadId && state.lastSeq === null && state.awaitingSnapshot) {
    composer.showError(_("The conversation is still loading."));
    return false;
  }
  if (!socket.isOpen) {
    composer.showError(_("Not connected — reconnecting. Your text is still here; send it again in a moment."));
    return false;
  }
  if (tray.uploading) {
    composer.showError(_("Wait for the files to finish uploading."));
    return false;
  }
  const clientMsgId = newUuid();
  const attachments = tray.ids();
  const frame = {
    type: "message.send", thread: state.threadId, content: text, client_msg_id: clientMsgId, ref: clientMsgId,
    model: newThreadModel(), agent: newThreadAgent(),
  };
  if (attachments.length) frame.attachments = attachments;
  const turnedOff = newThreadTools();
  if (turnedOff.length) frame.disabled_tools = turnedOff;
  socket.send(frame);
  // The last user message the server confirmed: a snapshot holds this one after it once it is stored.
  const afterUser = [...view.messages.values()].findLast((m) => m.role === "user" && m.id !== null)?.id ?? null;
  const bubble = view.addUserMessage(text, tray.summaries());
  bubble.root.dataset.clientMsgId = clientMsgId;
  state.pending = {
    clientMsgId, content: text, view: bubble, afterUser,
    connection: state.connection, resent: false, attachments, taken: tray.take(),
  };
  view.scroll.toBottom();
  if (state.threadId) sidebar.moveToTop(state.threadId);
  updateBusy();
  queueMicrotask(() => usageMeter.showGauge()); // once the composer has let go of the draft
  return true;
}

/** Sends the pending message again with the same client_msg_id (the server treats it as the same send). */
function resendPending() {
  const p = state.pending;
  if (!p || p.connection === state.connection) return;
  p.connection = state.connection;
  p.resent = true;
  const frame = {
    type: "message.send", thread: state.threadId, content: p.content, client_msg_id: p.clientMsgId, ref: p.clientMsgId,
    model: newThreadModel(), agent: newThreadAgent(),
  };
  if (p.attachments?.length) frame.attachments = p.attachments;
  const turnedOff = newThreadTools();
  if (turnedOff.length) frame.disabled_tools = turnedOff;
  socket.send(frame);
}

/** The server closed the socket over a frame too large to take: most likely the message being sent. It is given
 * back rather than sent again on the next connection, which would be refused the same way. */
function handleTooLarge() {
  const p = state.pending;
  if (p) {
    view.remove(p.view);
    state.pending = null;
    composer.restore(p.content);
    tray.giveBack(p.taken || []);
  }
  updateBusy();
  composer.showError(_("That message is too large to send. Shorten it (or split it in parts) and send it again."));
}

function confirmPending(messageId = null) {
  if (!state.pending) return;
  if (messageId !== null) view.adopt(state.pending.view, messageId);
  state.pending = null;
}

/**
 * run.started of a message.send: `message` is the sent message's id and `user_message` the message itself with the
 * client_msg_id it was sent with. This tab's bubble gets the id (Edit needs it); a message another tab sent is shown.
 * A server from before `user_message` sends only the id: it is then taken as this tab's. Two tabs sending at once:
 * the losing tab shows the winner's message, and its own bubble goes when its send is refused (run_active).
 */
function handleSent(ev) {
  const sent = ev.user_message && typeof ev.user_message === "object" ? ev.user_message : null;
  const p = state.pending;
  if (p && (!sent || !sent.client_msg_id || sent.client_msg_id === p.clientMsgId)) {
    confirmPending(idOf(ev.message) ?? null);
    return;
  }
  if (sent && sent.id !== undefined && sent.id !== null && !view.messages.has(String(sent.id))) {
    view.appendMessages([{ ...sent, role: "user" }]);
  }
}

function stopRun() {
  if (!state.threadId) return;
  if (!socket.send({ type: "run.cancel", thread: state.threadId, ref: nextRef("cancel") })) {
    composer.showError(_("Not connected — cannot stop right now."));
    return;
  }
  $("stop").disabled = true;
}

const handleEvent = threadEvents({
  state, view, pages, turns, usageMeter, picker, toolSwitches, toolCatalog, announcer, composer, tray, actions,
  sidebar, sidebarActions, agentFilter, agentLabel, agentChoice,
  subscribe, updateBusy, handleSent, confirmPending, resendPending, describeError, threadUrl,
});

updateBusy();
socket.start();
composer.focus();
