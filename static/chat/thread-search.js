// The sidebar's search over chat titles and content (GET search?q=, debounced, every version of a message) and its
// filter by where a chat was started (the chat, the API, a schedule, a trigger). Older chats than the page lists
// are added while a search or a filter lasts. Titles and snippets go in as text.

import { el } from "./dom.js";
import { threadListItem } from "./thread-item.js";
import { _, format } from "./i18n.js";

const SEARCH_DELAY_MS = 250;
// The origin filter's choices: Thread.source's values (thread-item.js ORIGINS marks each but the chat's own).
const ORIGIN_CHOICES = [
  ["", _("All chats")],
  ["chat", _("Typed in the chat")],
  ["api", _("From the API")],
  ["schedule", _("Scheduled")],
  ["trigger", _("Triggered")],
];


export class ThreadSearch {
  /**
   * @param {object} opts
   * @param {HTMLElement} opts.root      #sidebar (the search goes under its "New chat")
   * @param {HTMLElement} opts.list      #thread-list
   * @param {HTMLElement|null} opts.archived  #archived-list
   * @param {string} opts.homeUrl        where search lives
   * @param {(id: string) => string} opts.hrefFor
   * @param {(id: string) => HTMLElement|null} opts.findItem  a chat's entry in the list or the archived list
   * @param {() => void} opts.regroup    the list's date groups again (SidebarActions)
   */
  constructor({ root, list, archived, homeUrl, hrefFor, findItem, regroup }) {
    Object.assign(this, { root, list, archived, homeUrl, hrefFor, findItem, regroup });
    this.searchSeq = 0;
    this.timer = null;
    this.buildSearch();
  }

  /** The words searched for, as typed ("" when none). */
  get query() {
    return this.searchInput.value;
  }

  buildSearch() {
    const wrap = el("div", "thread-search");
    const label = el("label", "visually-hidden", _("Search chats"));
    label.htmlFor = "thread-search";
    this.searchInput = el("input", "thread-search-input");
    Object.assign(this.searchInput, { id: "thread-search", type: "search", placeholder: _("Search chats…"), maxLength: 200 });
    this.searchInput.setAttribute("autocomplete", "off");
    this.searchStatus = el("p", "thread-search-status");
    this.searchStatus.setAttribute("role", "status");
    this.searchStatus.hidden = true;
    wrap.append(label, this.searchInput, ...this.buildOriginFilter());
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
      const response = await fetch(this.searchUrl(query), { credentials: "same-origin" });
      if (!response.ok) throw new Error(format(_("The server answered %(status)s."), { status: response.status }));
      threads = (await response.json()).threads;
    } catch (error) {
      if (seq === this.searchSeq) this.setStatus(format(_("Search failed: %(reason)s"), { reason: error.message }));
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
      const li = threadListItem({
        id: String(t.id),
        title: String(t.title || ""),
        href: this.hrefFor(String(t.id)),
        source: t.source,
      });
      li.dataset.searchExtra = "1";
      this.list.append(li);
    }
    this.showMatches(threads);
    this.list.hidden = false;
    this.setStatus(threads.length ? "" : _("No chats match."));
  }

  /** Under each chat found by a message, what matched, and which version when the chat has versions there or no
   * longer shows it (search covers every version: GET search's `match`). */
  showMatches(threads) {
    for (const old of this.list.querySelectorAll(".thread-search-match")) old.remove();
    for (const t of threads) {
      const li = this.item(t.id);
      const match = t.match;
      if (!li || !match || typeof match.snippet !== "string") continue;
      const line = el("p", "thread-search-match", match.snippet);
      const version = match.version;
      const where = [];
      if (version && Number.isInteger(version.index)) where.push(format(_("version %(index)s of %(count)s"), { index: version.index, count: version.count }));
      if (match.shown === false) where.push(_("not the version shown"));
      if (where.length) line.prepend(el("span", "thread-search-version", `(${where.join(", ")}) `));
      li.append(line);
    }
  }

  // --- the origin filter: all chats, or those typed in a tab, started from the API, by a schedule, by a trigger ---

  buildOriginFilter() {
    const label = el("label", "visually-hidden", _("Show the chats started"));
    label.htmlFor = "origin-filter";
    this.originSelect = el("select", "origin-filter");
    this.originSelect.id = "origin-filter";
    this.originSelect.title = _("Show the chats started");
    for (const [value, text] of ORIGIN_CHOICES) this.originSelect.append(new Option(text, value));
    this.originSelect.addEventListener("change", () => this.filterOrigin());
    return [label, this.originSelect];
  }

  /** The origin picked, "" for all. */
  origin() {
    return this.originSelect?.value || "";
  }

  /** Whether the origin filter leaves `li` out (the list's CSS hides it: sidebar.css, `data-origin`). */
  filteredOut(li) {
    const origin = this.origin();
    return Boolean(origin) && (li.dataset.source || "chat") !== origin;
  }

  searchUrl(query) {
    const origin = this.origin();
    return `${this.homeUrl}search?q=${encodeURIComponent(query)}${origin ? `&source=${encodeURIComponent(origin)}` : ""}`;
  }

  async filterOrigin() {
    const origin = this.origin();
    for (const list of [this.list, this.archived]) {
      if (!list) continue;
      if (origin) list.dataset.origin = origin;
      else delete list.dataset.origin;
    }
    for (const li of [...this.list.children]) if (li.dataset.originExtra) li.remove();
    const query = this.searchInput.value.trim();
    if (query) {
      await this.search(query);
      return;
    }
    this.regroup();
    this.setStatus("");
    if (origin) await this.addOlder(origin);
  }

  /** The chats of `origin` older than the list the page shows, added while the filter lasts. */
  async addOlder(origin) {
    const seq = ++this.searchSeq;
    let threads;
    try {
      const response = await fetch(this.searchUrl(""), { credentials: "same-origin" });
      if (!response.ok) throw new Error(format(_("The server answered %(status)s."), { status: response.status }));
      threads = (await response.json()).threads;
    } catch (error) {
      if (seq === this.searchSeq) this.setStatus(format(_("Could not list them: %(reason)s"), { reason: error.message }));
      return;
    }
    if (seq !== this.searchSeq || origin !== this.origin() || !Array.isArray(threads)) return;
    for (const t of threads) {
      if (t.archived || this.findItem(String(t.id))) continue;
      const li = threadListItem({ id: String(t.id), title: String(t.title || ""), href: this.hrefFor(String(t.id)), source: t.source });
      li.dataset.originExtra = "1";
      li.dataset.updated = String(t.updated_at || "");
      this.list.append(li);
    }
    const shown = [...this.list.children].some((li) => li.classList.contains("thread-item") && !li.hidden && !this.filteredOut(li));
    this.list.hidden = false;
    this.setStatus(shown ? "" : _("No chats were started this way."));
  }

  showAll() {
    for (const old of this.list.querySelectorAll(".thread-search-match")) old.remove();
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
}
