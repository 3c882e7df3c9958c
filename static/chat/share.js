// "Share" and "Export" in the thread's top bar (markup: templates/sharing/thread_controls.html).
// The thread is read from the address when a menu opens, so a new chat can be shared once its first message
// has given it an address. The link comes back once, from the server, and is shown only as text.

import { _, format } from "./i18n.js";
const PLACEHOLDER = "00000000-0000-0000-0000-000000000000";
const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

const $ = (id) => document.getElementById(id);
const root = $("thread-tools");

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The id of the thread the page shows now, from its address; null on a new chat. */
function currentThreadId() {
  const [before, after] = (root.dataset.threadUrl || `/t/${PLACEHOLDER}/`).split(PLACEHOLDER);
  const match = new RegExp(`^${escapeRegExp(before)}(${UUID})${escapeRegExp(after || "")}$`).exec(location.pathname);
  return match ? match[1] : null;
}

const urlFor = (template, id) => template.replace(PLACEHOLDER, encodeURIComponent(id));

function describeFailure(status, body) {
  if (status === 403) return _("Your session has ended or the page is too old: reload the page and try again.");
  if (status === 404) return _("This conversation could not be found.");
  const errors = body && body.errors;
  if (errors && typeof errors === "object") {
    const first = Object.values(errors).flat()[0];
    if (first && typeof first.message === "string") return first.message;
  }
  return format(_("The link could not be created (error %(status)s). Try again."), { status });
}

class ShareMenu {
  constructor() {
    this.menu = $("share-menu");
    this.form = $("share-form");
    this.empty = $("share-empty");
    this.error = $("share-error");
    this.createButton = $("share-create");
    this.result = $("share-result");
    this.urlInput = $("share-url");
    this.copied = $("share-copied");
    this.threadId = null;
    this.busy = false;
    this.menu.addEventListener("toggle", () => (this.menu.open ? this.opened() : this.reset()));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create();
    });
    $("share-copy").addEventListener("click", () => this.copy());
  }

  opened() {
    this.threadId = currentThreadId();
    this.empty.hidden = this.threadId !== null;
    this.form.hidden = this.threadId === null || !this.result.hidden;
    if (this.threadId) {
      this.form.action = urlFor(root.dataset.shareUrl, this.threadId);
      this.askPromptOption(this.threadId);
    }
  }

  /** "Hide the system prompt" is offered only for a prompt the person can read (a new chat's agent was picked on
   * this page, so the page asks): otherwise the form says the prompt is not shared, as the server enforces. */
  async askPromptOption(threadId) {
    try {
      const response = await fetch(urlFor(root.dataset.shareOptionsUrl, threadId), {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      const body = response.ok ? await response.json() : null;
      if (!body || typeof body.shares_system_prompt !== "boolean" || threadId !== this.threadId) return;
      this.showPromptOption(body.shares_system_prompt);
    } catch {
      // Unreachable: the form stays as it was; the server hides a prompt the person cannot read anyway.
    }
  }

  showPromptOption(shared) {
    $("share-prompt-choice").hidden = !shared;
    $("share-hide-prompt").disabled = !shared;
    $("share-prompt-not-shared").hidden = shared;
  }

  /** Closing the menu forgets the link: it was shown once. */
  reset() {
    this.result.hidden = true;
    this.urlInput.value = "";
    this.copied.textContent = "";
    this.showError("");
    this.form.hidden = this.threadId === null;
  }

  showError(text) {
    this.error.textContent = text;
    this.error.hidden = !text;
  }

  async create() {
    if (this.busy || !this.threadId) return;
    this.busy = true;
    this.createButton.disabled = true;
    this.showError("");
    try {
      const response = await fetch(this.form.action, {
        method: "POST",
        body: new FormData(this.form),
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      const body = await response.json().catch(() => null);
      if (response.status !== 201 || !body || typeof body.url !== "string") {
        this.showError(describeFailure(response.status, body));
        return;
      }
      this.urlInput.value = body.url;
      this.form.hidden = true;
      this.result.hidden = false;
      this.urlInput.focus();
      this.urlInput.select();
    } catch {
      this.showError(_("The server could not be reached. Try again in a moment."));
    } finally {
      this.busy = false;
      this.createButton.disabled = false;
    }
  }

  async copy() {
    const text = this.urlInput.value;
    if (!text) return;
    try {
      await navigator.clipboard.writeText(text); // only in secure contexts (https, localhost)
    } catch {
      this.urlInput.select();
      if (!document.execCommand("copy")) {
        this.copied.textContent = _("Select the link and copy it.");
        return;
      }
    }
    this.copied.textContent = _("Copied.");
  }
}

class ExportMenu {
  constructor() {
    this.menu = $("export-menu");
    this.menu.addEventListener("toggle", () => {
      if (!this.menu.open) return;
      const id = currentThreadId();
      $("export-empty").hidden = id !== null;
      $("export-links").hidden = id === null;
      if (id) {
        $("export-md").href = urlFor(root.dataset.exportMdUrl, id);
        $("export-json").href = urlFor(root.dataset.exportJsonUrl, id);
      }
    });
  }
}

/** One menu open at a time; Escape or a click elsewhere closes it. */
function closeMenusOnOutsideClick(menus) {
  document.addEventListener("click", (event) => {
    for (const menu of menus) if (menu.open && !menu.contains(event.target)) menu.open = false;
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    for (const menu of menus) {
      if (!menu.open) continue;
      menu.open = false;
      menu.querySelector("summary").focus();
    }
  });
  for (const menu of menus) {
    menu.addEventListener("toggle", () => {
      if (menu.open) for (const other of menus) if (other !== menu) other.open = false;
    });
  }
}

if (root) {
  const share = new ShareMenu();
  const exporter = new ExportMenu();
  closeMenusOnOutsideClick([share.menu, exporter.menu]);
}
