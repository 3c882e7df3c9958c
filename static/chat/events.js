// The chat page's handling of the server's events: the person's thread list and inbox (any thread), then the open
// thread's events in `seq` order (one seen already is dropped; a gap asks for a snapshot again), its snapshot, and
// the errors that answer this tab's frames. app.js builds the page's parts and hands them over here.

import { idOf } from "./thread.js";
import { runNote } from "./models.js";
import { applyBranchChanged } from "./versions.js";
import { refreshCount } from "../inbox/count.js";
import { _, format } from "./i18n.js";

/**
 * @param {object} app  the page's state and parts (app.js): `state` is shared and changed in place; `subscribe`,
 *   `updateBusy`, `handleSent`, `confirmPending`, `resendPending`, `describeError` and `threadUrl` are app.js's.
 * @returns {(ev: object) => void} what the socket calls with each event
 */
export function threadEvents(app) {
  const {
    state, view, pages, turns, usageMeter, picker, toolSwitches, toolCatalog, announcer, composer, tray, actions,
    sidebar, sidebarActions, agentFilter, agentLabel, agentChoice,
    subscribe, updateBusy, handleSent, confirmPending, resendPending, describeError, threadUrl,
  } = app;

  function handleEvent(ev) {
    switch (ev.type) {
      case "pong":
        return;
      case "error":
        handleError(ev);
        return;
      case "thread.created":
        handleThreadCreated(ev);
        return;
      case "thread.snapshot":
        handleSnapshot(ev);
        return;
      case "thread.listed":
      case "thread.renamed":
      case "thread.deleted":
        handleListChange(ev);
        if (ev.type === "thread.deleted") refreshCount();
        return;
      case "inbox.changed": // a call or a request started or stopped waiting, in any of the person's threads
        refreshCount();
        return;
      case "thread.pinned":
      case "thread.archived":
        sidebarActions.applyEvent(ev);
        return;
      default:
        break;
    }
    if (!state.threadId || (ev.thread !== undefined && String(ev.thread) !== state.threadId)) return;
    if (typeof ev.seq === "number") {
      if (state.awaitingSnapshot) return; // the snapshot on its way includes it
      if (state.lastSeq !== null && ev.seq <= state.lastSeq) return;
      if (state.lastSeq !== null && ev.seq > state.lastSeq + 1) {
        subscribe(null); // a gap: start over from a snapshot
        return;
      }
      state.lastSeq = ev.seq;
    }
    switch (ev.type) {
      case "run.started":
        state.runActive = true;
        handleSent(ev);
        break;
      case "thread.model_changed":
        picker.changed(ev);
        break;
      case "thread.tools_changed":
        toolSwitches.set(ev.disabled_tools);
        break;
      case "thread.rewound":
        return; // from before versions: the thread.branch_changed that follows says it all
      case "thread.branch_changed":
        usageMeter.removed(ev.removed);
        applyBranchChanged(view, ev, turns);
        pages.branchChanged(ev);
        for (const m of Array.isArray(ev.messages) ? ev.messages : []) if (m?.usage) usageMeter.add(m.id, m.usage);
        updateBusy();
        return;
      case "run.note":
        if (typeof ev.text === "string") view.append(runNote(ev.text));
        break;
      case "thread.summarised":
        view.showSummary(ev.summary);
        break;
      case "run.waiting":
        state.runActive = true;
        break;
      case "message.completed":
        if (ev.usage) usageMeter.add(idOf(ev.message), ev.usage);
        break;
      case "run.completed":
      case "run.failed":
      case "run.cancelled":
        state.runActive = false;
        break;
      case "message.started":
        // The server may one day announce user messages too: the optimistic bubble is that message.
        if (ev.message?.role === "user" && state.pending) {
          confirmPending(idOf(ev.message));
          return;
        }
        break;
      default:
        break;
    }
    view.apply(ev);
    updateBusy();
    announcer.heard(ev);
  }

  function handleThreadCreated(ev) {
    const id = String(ev.thread);
    const title = typeof ev.title === "string" ? ev.title : "";
    if (!state.threadId && state.pending) {
      state.threadId = id;
      state.lastSeq = null;
      history.replaceState(null, "", threadUrl(id));
      sidebar.add(id, title, true);
      agentFilter.tag(id, ev.agent);
      agentLabel.show(ev.agent);
      // Continue gives the thread's agent's step limit (docs/agents.md): the page's number was the server's.
      const steps = agentChoice.steps(ev.agent?.slug);
      if (steps) view.notices.continueSteps = steps;
      if (title) document.title = `${title} · agentweb`;
      subscribe(null);
      updateBusy();
    } else if (!sidebar.item(id)) {
      sidebar.add(id, title, false);
      agentFilter.tag(id, ev.agent);
    }
  }

  /** Another tab (or this one, over HTTP) created, renamed or deleted one of this person's threads. */
  function handleListChange(ev) {
    const id = String(ev.thread);
    const title = typeof ev.title === "string" ? ev.title : "";
    if (ev.type === "thread.listed") {
      if (!sidebar.item(id)) sidebar.add(id, title, false, ev.source);
      if ("agent" in ev) agentFilter.tag(id, ev.agent);
    } else if (ev.type === "thread.renamed") {
      sidebar.setTitle(id, title);
      if (id === state.threadId && title) document.title = `${title} · agentweb`;
    } else {
      sidebar.remove(id);
      sidebarActions.leaveIfGone(id);
    }
  }

  function handleSnapshot(ev) {
    if (!state.threadId || String(ev.thread) !== state.threadId) return;
    state.awaitingSnapshot = false;
    state.lastSeq = typeof ev.seq === "number" ? ev.seq : null;
    view.reset(ev);
    pages.reset(ev);
    turns.reset(ev.messages);
    usageMeter.reset(ev.messages, pages.cursor !== null);
    for (const text of Array.isArray(ev.run?.notes) ? ev.run.notes : []) view.append(runNote(text));
    const users = (Array.isArray(ev.messages) ? ev.messages : []).filter((m) => m.role === "user");
    const p = state.pending;
    if (p) {
      // By id (they grow), not by position: a paged snapshot starts wherever its page does.
      const match = users.find((m) => p.afterUser === null || Number(m.id) > Number(p.afterUser));
      if (match && match.content === p.content) {
        state.pending = null; // the snapshot holds it now
      } else {
        view.append(p.view.root); // not stored yet: keep showing it
        resendPending(); // only if it went out on an earlier connection
      }
    }
    const run = ev.run;
    state.runActive = Boolean(run && (run.status === "running" || run.status === "waiting"));
    if (typeof ev.title === "string" && ev.title) {
      document.title = `${ev.title} · agentweb`;
      sidebar.setTitle(state.threadId, ev.title);
    }
    if (ev.model) picker.show(ev.model);
    if ("agent" in ev) {
      agentLabel.show(ev.agent);
      agentFilter.tag(state.threadId, ev.agent);
      toolCatalog.setAgent(ev.agent?.slug || "");
    }
    if (Array.isArray(ev.disabled_tools)) toolSwitches.set(ev.disabled_tools);
    updateBusy();
  }

  function handleError(ev) {
    if (picker.handleError(ev)) {
      composer.showError(ev.message || _("That model cannot be picked."));
      return;
    }
    if (toolSwitches.handleError(ev)) return;
    if (actions.handleError(ev)) {
      updateBusy();
      return;
    }
    const code = ev.code || "";
    const p = state.pending;
    if (p && ev.ref === p.clientMsgId) {
      if (p.resent && code === "run_active") {
        subscribe(null); // the first try got through after all; the snapshot will show it
        return;
      }
      view.remove(p.view);
      state.pending = null;
      composer.restore(p.content);
      tray.giveBack(p.taken || []);
      if (code === "run_active") subscribe(null); // learn about the run we did not know of
    }
    if (ev.ref && ev.ref === state.subscribeRef) state.awaitingSnapshot = false;
    if (code === "no_active_run") state.runActive = false;
    updateBusy();
    composer.showError(describeError(code, ev.message || format(_("Error: %(code)s"), { code: code || "unknown" })));
  }

  return handleEvent;
}
