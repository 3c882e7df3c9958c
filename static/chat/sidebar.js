// The sidebar's own actions: rename (inline), delete (after a confirm), and search over titles and content
// (GET search?q=, debounced). Titles are untrusted: they only ever go in through textContent / value.

import { el, button } from "./dom.js";
import { threadListItem } from "./render.js";

const SEARCH_DELAY_MS = 250;

// The styles of the sidebar actions and the last-turn actions (rewind.js), next to this module.
if (!document.querySelector("link[data-sidebar-css]")) {
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = new URL("./sidebar.css", import.meta.url).href;
  link.dataset.sidebarCss = "";
  document.head.append(link);
}
const TITLE_MAX = 200;

/** The CSRF token Django set as a cookie (the chat page asks for one). */
function csrfToken() {
  for (const part of document.cookie.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === "csrftoken") return decodeURIComponent(rest.join("="));
  }
  return "";
}

async function postJson(url, data) {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify(data || {}),
  });
  let body = {};
  try {
    body = await response.json();
  } catch {
    body = {};
  }
  if (!response.ok) {
    const reason = response.status === 404 ? "That chat no longer exists." : body.error || `The server answered ${response.status}.`;
    throw new Error(reason);
  }
  return body;
}

export class SidebarActions {
  /**
   * @param {object} opts
   * @param {HTMLElement} opts.root   #sidebar
   * @param {HTMLElement} opts.list   #thread-list
   * @param {string} opts.homeUrl     the app's root ("/"), where search lives and a deleted open thread goes
   * @param {(id: string) => string} opts.hrefFor  a thread's page ("/t/<id>/"); rename and delete live under it
   * @param {() => string|null} opts.currentId
   */
  constructor({ root, list, homeUrl, hrefFor, currentId }) {
    Object.assign(this, { root, list, homeUrl, hrefFor, currentId });
    this.searchSeq = 0;
    this.timer = null;
    this.buildSearch();
    for (const li of list.children) this.decorate(li);
    new MutationObserver((changes) => {
      for (const change of changes) for (const node of change.addedNodes) if (node.nodeType === 1) this.decorate(node);
    }).observe(list, { childList: true });
  }

  // --- search -------------------------------------------------------------------------

  buildSearch() {
    const wrap = el("div", "thread-search");
    const label = el("label", "visually-hidden", "Search chats");
    label.htmlFor = "thread-search";
    this.searchInput = el("input", "thread-search-input");
    Object.assign(this.searchInput, { id: "thread-search", type: "search", placeholder: "Search chats…", maxLength: 200 });
    this.searchInput.setAttribute("autocomplete", "off");
    this.searchStatus = el("p", "thread-search-status");
    this.searchStatus.setAttribute("role", "status");
    this.searchStatus.hidden = true;
    wrap.append(label, this.searchInput);
    const anchor = this.root.querySelector(".new-chat");
    if (anchor) anchor.after(wrap, this.searchStatus);
    else this.root.prepend(wrap, this.searchStatus);
    this.searchInput.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.search(this.searchInput.value.trim()), SEARCH_DELAY_MS);
    });
    this.searchInput.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.searchInput.value) {
        this.searchInput.value = "";
        this.search("");
      }
    });
  }

  async search(query) {
    const seq = ++this.searchSeq;
    if (!query) {
      this.showAll();
      return;
    }
    let threads;
    try {
      const response = await fetch(`${this.homeUrl}search?q=${encodeURIComponent(query)}`, { credentials: "same-origin" });
      if (!response.ok) throw new Error(`The server answered ${response.status}.`);
      threads = (await response.json()).threads;
    } catch (error) {
      if (seq === this.searchSeq) this.setStatus(`Search failed: ${error.message}`);
      return;
    }
    if (seq !== this.searchSeq || !Array.isArray(threads)) return; // a later search is on its way
    const found = new Set(threads.map((t) => String(t.id)));
    for (const li of [...this.list.children]) {
      if (li.dataset.searchExtra && !found.has(li.dataset.threadId)) li.remove();
      else li.hidden = !found.has(li.dataset.threadId);
    }
    for (const t of threads) {
      if (this.item(t.id)) continue;
      // Older than the list the page shows: add it while the search lasts.
      const li = threadListItem({ id: String(t.id), title: String(t.title || ""), href: this.hrefFor(String(t.id)) });
      li.dataset.searchExtra = "1";
      this.list.append(li);
    }
    this.list.hidden = false;
    this.setStatus(threads.length ? "" : "No chats match.");
  }

  showAll() {
    for (const li of [...this.list.children]) {
      if (li.dataset.searchExtra) li.remove();
      else li.hidden = false;
    }
    this.setStatus("");
  }

  setStatus(text) {
    this.searchStatus.textContent = text;
    this.searchStatus.hidden = !text;
  }

  item(id) {
    for (const li of this.list.children) if (li.dataset.threadId === String(id)) return li;
    return null;
  }

  // --- rename and delete ----------------------------------------------------------------

  decorate(li) {
    if (!li.classList?.contains("thread-item") || li.querySelector(".thread-actions")) return;
    const actions = el("div", "thread-actions");
    actions.append(
      button("Rename", "button subtle thread-rename", () => this.startRename(li)),
      button("Delete", "button subtle thread-delete", () => this.remove(li)),
    );
    const title = () => li.querySelector(".thread-title")?.textContent || "this chat";
    actions.children[0].setAttribute("aria-label", "Rename chat");
    actions.children[1].setAttribute("aria-label", "Delete chat");
    actions.children[0].addEventListener("focus", () => actions.children[0].setAttribute("aria-label", `Rename “${title()}”`));
    actions.children[1].addEventListener("focus", () => actions.children[1].setAttribute("aria-label", `Delete “${title()}”`));
    li.append(actions);
  }

  startRename(li) {
    if (li.querySelector(".thread-rename-form")) return;
    const titleEl = li.querySelector(".thread-title");
    const link = li.querySelector(".thread-link");
    const form = el("form", "thread-rename-form");
    const input = el("input", "thread-rename-input");
    Object.assign(input, { type: "text", value: titleEl ? titleEl.textContent : "", maxLength: TITLE_MAX, required: true });
    input.setAttribute("aria-label", "New title");
    const error = el("p", "thread-rename-error");
    error.setAttribute("role", "alert");
    error.hidden = true;
    form.append(input, error);
    link.hidden = true;
    li.querySelector(".thread-actions").hidden = true;
    li.prepend(form);
    input.focus();
    input.select();
    let done = false;
    const close = () => {
      done = true;
      form.remove();
      link.hidden = false;
      li.querySelector(".thread-actions").hidden = false;
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        close();
        link.focus();
      }
    });
    input.addEventListener("blur", () => {
      // Leaving the field without Enter cancels, unless a save is under way.
      setTimeout(() => { if (!done && !form.dataset.saving && document.activeElement !== input) close(); }, 150);
    });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const title = input.value.split(/\s+/).filter(Boolean).join(" ");
      if (!title || title.length > TITLE_MAX) {
        error.textContent = `A title has 1 to ${TITLE_MAX} characters.`;
        error.hidden = false;
        return;
      }
      form.dataset.saving = "1";
      input.disabled = true;
      try {
        const body = await postJson(`${this.hrefFor(li.dataset.threadId)}rename`, { title });
        const saved = String(body.thread?.title || title);
        if (titleEl) titleEl.textContent = saved;
        if (li.dataset.threadId === this.currentId()) document.title = `${saved} · agentweb`;
        close();
        link.focus();
      } catch (err) {
        delete form.dataset.saving;
        input.disabled = false;
        error.textContent = err.message;
        error.hidden = false;
        input.focus();
      }
    });
  }

  async remove(li) {
    const title = li.querySelector(".thread-title")?.textContent || "this chat";
    // eslint-disable-next-line no-alert
    if (!window.confirm(`Delete “${title}”? Its messages are deleted too; this cannot be undone.`)) return;
    const id = li.dataset.threadId;
    try {
      await postJson(`${this.hrefFor(id)}delete`, {});
    } catch (err) {
      if (!/no longer exists/.test(err.message)) {
        this.setStatus(`Could not delete: ${err.message}`);
        return;
      }
    }
    li.remove();
    if (!this.list.children.length) this.list.hidden = true;
    if (id === this.currentId()) window.location.assign(this.homeUrl);
  }
}
