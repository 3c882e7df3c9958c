// The tools this person may use now (GET /tools/available, cut down to the chat's agent's) for the Tools panel and
// the tool cards' descriptions, the switches that turn tools off for one chat, and the fetch of a tool call's stored
// artifact. Names and descriptions are the admin's or a tool author's text: they go in through textContent only.

import { el } from "./dom.js";
import { _, format } from "./i18n.js";

const APPROVAL_LABELS = {
  always: _("asks you first"),
  never: _("runs without asking"),
  depends: _("may ask first"),
};
const APPROVAL_HINTS = {
  always: _("Every call waits until you approve, edit or reject it."),
  never: _("Calls run as soon as the model makes them."),
  depends: _("Whether a call waits for you depends on its arguments (rules set by the admin)."),
};

async function getJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  const body = await response.json().catch(() => null);
  return { status: response.status, ok: response.ok, body };
}

/** The person's tool list, fetched when first needed and again whenever the panel opens. */
export class ToolCatalog {
  constructor(url, agent = "") {
    this.url = url;
    this.agent = agent; // the chat's agent's slug: the list is that agent's tools ("" for none)
    this.current = null; // Promise<Array<{name, description, approval}>>
  }

  /** The chat's agent changed (picked on the empty chat, or read from the thread): its tools are listed from now. */
  setAgent(slug) {
    const agent = typeof slug === "string" ? slug : "";
    if (agent === this.agent) return;
    this.agent = agent;
    this.current = null;
  }

  /** The list; `fresh` fetches it again (the admin may have changed it since). Rejects with a message. */
  tools(fresh = false) {
    if (!this.current || fresh) {
      const request = this.fetchList();
      this.current = request;
      request.catch(() => {
        if (this.current === request) this.current = null; // the next call tries again
      });
    }
    return this.current;
  }

  async fetchList() {
    if (!this.url) throw new Error(_("The tool list is not available on this page."));
    let answer;
    try {
      answer = await getJson(this.agent ? `${this.url}?agent=${encodeURIComponent(this.agent)}` : this.url);
    } catch {
      throw new Error(_("The server could not be reached. Try again in a moment."));
    }
    if (!answer.ok || !answer.body || !Array.isArray(answer.body.tools)) {
      if (answer.status === 403 || answer.status === 302) throw new Error(_("Your session has ended: reload the page."));
      throw new Error(format(_("The tool list could not be loaded (error %(status)s)."), { status: answer.status }));
    }
    return answer.body.tools.filter((t) => t && typeof t.name === "string");
  }

  /** What the tool does, or null when it is not (or no longer) in the person's list. */
  async description(name) {
    const found = (await this.tools()).find((t) => t.name === name);
    return found && typeof found.description === "string" ? found.description : null;
  }
}

/** Fetches a tool call's artifact; rejects with an Error whose message is for the person. */
export async function fetchArtifact(url) {
  let answer;
  try {
    answer = await getJson(url);
  } catch {
    throw new Error(_("The server could not be reached. Try again in a moment."));
  }
  if (answer.ok && answer.body && typeof answer.body === "object") return answer.body;
  if (answer.status === 404) {
    const said = answer.body && typeof answer.body.error === "string" ? answer.body.error : "";
    throw new Error(said || _("This artifact could not be found."));
  }
  throw new Error(format(_("The artifact could not be loaded (error %(status)s)."), { status: answer.status }));
}

/**
 * The Tools button and its panel: a non-modal dialog listing each tool's name, description and whether its calls
 * wait for approval. Escape, the close button or a click elsewhere closes it; Escape and the close button give
 * focus back to the button.
 */
export class ToolsPanel {
  constructor({ button, panel, list, status, closeButton, catalog, switches = null }) {
    Object.assign(this, { button, panel, list, status, closeButton, catalog, switches });
    switches?.onUpdate(() => switches.sync(list));
    this.loadCount = 0;
    button.addEventListener("click", () => (this.isOpen ? this.close(true) : this.open()));
    closeButton?.addEventListener("click", () => this.close(true));
    // Escape from inside the panel or on its button: another field's Escape (a rename, an edit) stays its own.
    const onKey = (event) => {
      if (event.key === "Escape" && this.isOpen) {
        event.preventDefault();
        this.close(true);
      }
    };
    panel.addEventListener("keydown", onKey);
    button.addEventListener("keydown", onKey);
    document.addEventListener("click", (event) => {
      if (this.isOpen && !panel.contains(event.target) && !button.contains(event.target)) this.close(false);
    });
  }

  get isOpen() {
    return !this.panel.hidden;
  }

  open() {
    this.panel.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.panel.focus();
    this.load();
  }

  close(returnFocus) {
    if (!this.isOpen) return;
    this.panel.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    if (returnFocus) this.button.focus();
  }

  setStatus(text, kind = "") {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
    this.status.hidden = !text;
  }

  async load() {
    const count = ++this.loadCount;
    this.setStatus(_("Loading…"));
    this.list.setAttribute("aria-busy", "true");
    try {
      const tools = await this.catalog.tools(true);
      if (count !== this.loadCount) return;
      this.list.replaceChildren(...tools.map((tool) => toolEntry(tool, this.switches)));
      this.setStatus(tools.length ? "" : _("No tools are available to you right now."));
    } catch (error) {
      if (count !== this.loadCount) return;
      this.setStatus(error instanceof Error ? error.message : _("The tool list could not be loaded."), "error");
    } finally {
      if (count === this.loadCount) this.list.removeAttribute("aria-busy");
    }
  }
}

/** One tool of the panel's list, as text; with its switch for this chat when `switches` is given. */
export function toolEntry(tool, switches = null) {
  const item = el("li", "tool-entry");
  item.dataset.toolName = tool.name;
  const head = el("div", "tool-entry-head");
  if (switches) head.append(switches.control(tool.name));
  head.append(el("span", "tool-entry-name", tool.name));
  const approval = Object.hasOwn(APPROVAL_LABELS, tool.approval) ? tool.approval : "never";
  const badge = el("span", `tool-entry-approval approval-${approval}`, APPROVAL_LABELS[approval]);
  badge.title = APPROVAL_HINTS[approval];
  badge.dataset.approval = approval;
  head.append(badge);
  item.append(head);
  const description = typeof tool.description === "string" ? tool.description.trim() : "";
  item.append(el("p", "tool-entry-description", description || _("No description.")));
  switches?.sync(item);
  return item;
}

/**
 * The tools turned off for this chat (docs/ui.md, "The Tools panel"): the set the server keeps with the thread
 * (`disabled_tools` of its snapshot, `thread.tools_changed`), one switch per tool in the panel, and how many are off
 * on the Tools button. A change is sent at once for a stored chat (`thread.set_tool`); a new chat keeps it here until
 * its first message carries it. Switches are locked while a run is active: a run reads the set as it starts.
 */
export class ToolSwitches {
  /**
   * @param {object} o
   * @param {HTMLElement|null} o.button  #tools-toggle, whose name says how many are off
   * @param {HTMLElement|null} o.countEl  #tools-off-count, in the Tools button
   * @param {HTMLElement|null} o.lockedEl  #tools-locked, the panel's line saying why the switches are locked
   * @param {(name: string, enabled: boolean) => string|null|false} o.send  sends a change: a ref to match an error
   *   against, null when there is nothing to send yet (a new chat), false when it could not be sent
   * @param {(message: string) => void} o.onError
   */
  constructor({ button, countEl, lockedEl, send, onError }) {
    Object.assign(this, { button, countEl, lockedEl, send, onError });
    this.off = new Set();
    this.locked = false;
    this.pending = new Map(); // ref → the set before the change, given back if the server refuses it
    this.listeners = [];
    this.render();
  }

  onUpdate(listener) {
    this.listeners.push(listener);
  }

  /** The names turned off, sorted (what a new chat's first message carries). */
  get names() {
    return [...this.off].sort();
  }

  /** The server's set (a snapshot, `thread.tools_changed`): it replaces what this tab had. */
  set(names) {
    this.off = new Set(Array.isArray(names) ? names.filter((n) => typeof n === "string") : []);
    this.pending.clear();
    this.render();
  }

  lock(locked) {
    if (locked === this.locked) return;
    this.locked = locked;
    this.render();
  }

  toggle(name, enabled) {
    if (this.locked) return this.render();
    const before = new Set(this.off);
    if (enabled) this.off.delete(name);
    else this.off.add(name);
    const ref = this.send(name, enabled);
    if (ref === false) {
      this.off = before;
      this.onError(_("Not connected — reconnecting. Try again in a moment."));
    } else if (ref) {
      this.pending.set(ref, before);
    }
    this.render();
  }

  /** An `error` answering a change this tab sent: the switch goes back. True when it was one. */
  handleError(ev) {
    if (!ev.ref || !this.pending.has(ev.ref)) return false;
    this.off = this.pending.get(ev.ref);
    this.pending.delete(ev.ref);
    this.render();
    this.onError(ev.message || _("That tool could not be switched."));
    return true;
  }

  /** The switch of tool `name`: a labelled checkbox with the switch role, on when the tool may be used. */
  control(name) {
    const input = document.createElement("input");
    input.type = "checkbox";
    input.className = "tool-switch";
    input.setAttribute("role", "switch");
    input.setAttribute("aria-label", format(_("Use %(tool)s in this chat"), { tool: name }));
    input.dataset.tool = name;
    input.addEventListener("change", () => this.toggle(name, input.checked));
    this.syncControl(input);
    return input;
  }

  syncControl(input) {
    const on = !this.off.has(input.dataset.tool);
    input.checked = on;
    input.disabled = this.locked;
    input.title = this.locked ? _("Wait for the answer to finish") : on ? _("Switch off for this chat") : _("Switch on");
    input.closest(".tool-entry")?.classList.toggle("tool-entry-off", !on);
  }

  /** Brings the switches of a rendered list in line with the set. */
  sync(list) {
    for (const input of list.querySelectorAll("input.tool-switch")) this.syncControl(input);
  }

  render() {
    const count = this.off.size;
    if (this.countEl) {
      this.countEl.textContent = count ? format(_("%(count)s off"), { count }) : "";
      this.countEl.hidden = !count;
    }
    // The count is a separate pill (shown on a phone too, where the word is not): the button's name says both.
    if (count) this.button?.setAttribute("aria-label", format(_("Tools, %(count)s off in this chat"), { count }));
    else this.button?.removeAttribute("aria-label");
    if (this.lockedEl) this.lockedEl.hidden = !this.locked;
    for (const listener of this.listeners) listener();
  }
}
