// The tools this person may use now (GET /tools/available) for the Tools panel and the tool cards' descriptions,
// and the fetch of a tool call's stored artifact. Names and descriptions are the admin's or a tool author's text:
// they go in through textContent only.

import { el } from "./dom.js";

const APPROVAL_LABELS = {
  always: "asks you first",
  never: "runs without asking",
  depends: "may ask first",
};
const APPROVAL_HINTS = {
  always: "Every call waits until you approve, edit or reject it.",
  never: "Calls run as soon as the model makes them.",
  depends: "Whether a call waits for you depends on its arguments (rules set by the admin).",
};

async function getJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  const body = await response.json().catch(() => null);
  return { status: response.status, ok: response.ok, body };
}

/** The person's tool list, fetched when first needed and again whenever the panel opens. */
export class ToolCatalog {
  constructor(url) {
    this.url = url;
    this.current = null; // Promise<Array<{name, description, approval}>>
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
    if (!this.url) throw new Error("The tool list is not available on this page.");
    let answer;
    try {
      answer = await getJson(this.url);
    } catch {
      throw new Error("The server could not be reached. Try again in a moment.");
    }
    if (!answer.ok || !answer.body || !Array.isArray(answer.body.tools)) {
      if (answer.status === 403 || answer.status === 302) throw new Error("Your session has ended: reload the page.");
      throw new Error(`The tool list could not be loaded (error ${answer.status}).`);
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
    throw new Error("The server could not be reached. Try again in a moment.");
  }
  if (answer.ok && answer.body && typeof answer.body === "object") return answer.body;
  if (answer.status === 404) {
    const said = answer.body && typeof answer.body.error === "string" ? answer.body.error : "";
    throw new Error(said || "This artifact could not be found.");
  }
  throw new Error(`The artifact could not be loaded (error ${answer.status}).`);
}

/**
 * The Tools button and its panel: a non-modal dialog listing each tool's name, description and whether its calls
 * wait for approval. Escape, the close button or a click elsewhere closes it; Escape and the close button give
 * focus back to the button.
 */
export class ToolsPanel {
  constructor({ button, panel, list, status, closeButton, catalog }) {
    Object.assign(this, { button, panel, list, status, closeButton, catalog });
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
    this.setStatus("Loading…");
    this.list.setAttribute("aria-busy", "true");
    try {
      const tools = await this.catalog.tools(true);
      if (count !== this.loadCount) return;
      this.list.replaceChildren(...tools.map(toolEntry));
      this.setStatus(tools.length ? "" : "No tools are available to you right now.");
    } catch (error) {
      if (count !== this.loadCount) return;
      this.setStatus(error instanceof Error ? error.message : "The tool list could not be loaded.", "error");
    } finally {
      if (count === this.loadCount) this.list.removeAttribute("aria-busy");
    }
  }
}

/** One tool of the panel's list, as text. */
export function toolEntry(tool) {
  const item = el("li", "tool-entry");
  item.dataset.toolName = tool.name;
  const head = el("div", "tool-entry-head");
  head.append(el("span", "tool-entry-name", tool.name));
  const approval = Object.hasOwn(APPROVAL_LABELS, tool.approval) ? tool.approval : "never";
  const badge = el("span", `tool-entry-approval approval-${approval}`, APPROVAL_LABELS[approval]);
  badge.title = APPROVAL_HINTS[approval];
  badge.dataset.approval = approval;
  head.append(badge);
  item.append(head);
  const description = typeof tool.description === "string" ? tool.description.trim() : "";
  item.append(el("p", "tool-entry-description", description || "No description."));
  return item;
}
