// The sidebar's own actions: pin, archive, rename (inline), delete (after an in-page dialog), and search over
// titles and content (GET search?q=, debounced); the list's date groups (Pinned, Today, Yesterday, Previous 7
// days, Previous 30 days, then by month) and each chat's time, kept current. Titles are untrusted: they only ever
// go in through textContent / value.

import { el, button } from "./dom.js";
import { threadListItem } from "./render.js";
import { confirmDialog } from "./dialog.js";
import { icon } from "./icons.js";
import { _, format, ngettext, locale } from "./i18n.js";

const CLOCK_MS = 30_000;
const DAY_MS = 86_400_000;

/** The group of a chat last active at `when` (a Date), seen `now`, in the browser's own time zone. */
export function dateGroup(when, now = new Date()) {
  const day = dayOf(when, now);
  if (day === "today") return _("Today");
  if (day === "yesterday") return _("Yesterday");
  const t = when.getTime();
  const startOfToday = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  if (t >= startOfToday - 7 * DAY_MS) return _("Previous 7 days");
  if (t >= startOfToday - 30 * DAY_MS) return _("Previous 30 days");
  return when.toLocaleDateString(locale(), { month: "long", year: "numeric" });
}

/** "today", "yesterday" or "" for `when` seen `now`, in the browser's own time zone. */
function dayOf(when, now) {
  const startOfToday = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const t = when.getTime();
  if (t >= startOfToday) return "today";
  return t >= startOfToday - DAY_MS ? "yesterday" : "";
}

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", or the date. */
export function relativeTime(when, now = new Date()) {
  const seconds = Math.max(0, (now.getTime() - when.getTime()) / 1000);
  if (seconds < 60) return _("just now");
  if (seconds < 3600) return format(_("%(n)s min ago"), { n: Math.floor(seconds / 60) });
  if (dayOf(when, now) === "today") return format(_("%(n)s h ago"), { n: Math.floor(seconds / 3600) });
  if (dayOf(when, now) === "yesterday") return _("yesterday");
  // Whole days gone by (5 days and a minute is 5 days, not 6); at least 2, as "yesterday" took the day before.
  if (seconds < 7 * 86400) return format(_("%(n)s days ago"), { n: Math.max(2, Math.floor(seconds / 86400)) });
  return when.toLocaleDateString(locale(), { day: "numeric", month: "short", year: "numeric" });
}

const SEARCH_DELAY_MS = 250;
// The origin filter's choices: Thread.source's values (render.js ORIGINS marks each but the chat's own).
const ORIGIN_CHOICES = [
  ["", _("All chats")],
  ["chat", _("Typed in the chat")],
  ["api", _("From the API")],
  ["schedule", _("Scheduled")],
  ["trigger", _("Triggered")],
];

// The styles of the sidebar actions and the turn actions and version switchers (versions.js), next to this module.
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
    const reason = response.status === 404 ? _("That chat no longer exists.") : body.error || format(_("The server answered %(status)s."), { status: response.status });
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
    this.archived = root.querySelector("#archived-list");
    this.archivedBox = root.querySelector("#archived-threads");
    this.searchSeq = 0;
    this.leaving = false; // set once this tab is on its way home from a chat that is gone (leaveIfGone)
    this.timer = null;
    this.buildSearch();
    for (const li of list.children) this.decorate(li);
    for (const li of this.archived?.children || []) this.decorate(li);
    const watch = (changes) => {
      if (this.regrouping) return;
      for (const change of changes) {
        for (const node of change.addedNodes) {
          if (node.nodeType !== 1) continue;
          // A chat prepended (new, or one just written in) is active now.
          if (
            change.target === list &&
            node === list.firstElementChild &&
            !node.dataset.searchExtra &&
            !node.dataset.originExtra
          ) {
            this.touch(node);
          }
          this.decorate(node);
        }
      }
      this.regroup();
    };
    this.observers = [new MutationObserver(watch)];
    this.observers[0].observe(list, { childList: true, subtree: true, attributes: true, attributeFilter: ["hidden"] });
    if (this.archived) {
      this.observers.push(new MutationObserver(watch));
      this.observers[1].observe(this.archived, { childList: true });
    }
    this.regroup();
    setInterval(() => this.regroup(), CLOCK_MS);
  }

  /** Marks `li` as active now (its time and date group follow). */
  touch(li) {
    li.dataset.updated = new Date().toISOString();
    let time = li.querySelector(".thread-time");
    if (!time) {
      time = el("time", "thread-time");
      li.querySelector(".thread-link")?.append(time);
    }
    time.dateTime = li.dataset.updated;
  }

  /** Orders the list (pinned first, newest pin first; then newest activity first), heads each date group on its
   * first visible chat, and refreshes every chat's time. */
  regroup() {
    this.regrouping = true;
    try {
      const now = new Date();
      const items = [...this.list.children].filter((li) => li.classList.contains("thread-item"));
      const when = (li) => {
        const time = li.querySelector(".thread-time");
        const iso = time?.getAttribute("datetime") || li.dataset.updated;
        const date = iso ? new Date(iso) : now;
        return Number.isNaN(date.getTime()) ? now : date;
      };
      const pinnedAt = (li) => (li.dataset.pinned === "true" ? new Date(li.dataset.pinnedAt || 0).getTime() || 1 : 0);
      const sorted = [...items].sort((a, b) => pinnedAt(b) - pinnedAt(a) || when(b) - when(a));
      if (sorted.some((li, i) => li !== items[i]) && !this.searchInput?.value) this.list.append(...sorted);
      let last = null;
      for (const li of sorted) {
        const time = li.querySelector(".thread-time");
        if (time) {
          const text = relativeTime(when(li), now);
          if (time.textContent !== text) time.textContent = text;
          time.title = when(li).toLocaleString(locale());
        }
        const group = li.dataset.pinned === "true" ? _("Pinned") : dateGroup(when(li), now);
        if (li.hidden || this.filteredOut(li)) {
          delete li.dataset.groupLabel;
          continue;
        }
        if (group !== last) li.dataset.groupLabel = group;
        else delete li.dataset.groupLabel;
        last = group;
      }
      if (this.archivedBox) {
        const count = this.archived.children.length;
        this.archivedBox.hidden = count === 0;
        const counter = this.archivedBox.querySelector("#archived-count");
        if (counter) counter.textContent = String(count);
      }
    } finally {
      // Its own moves are not news (observers report later, as a microtask): drop them.
      for (const observer of this.observers || []) observer.takeRecords();
      this.regrouping = false;
    }
  }

  /** `thread.pinned` / `thread.archived` from any tab (this one's too): the item moves where it belongs. */
  applyEvent(ev) {
    const li = this.findItem(String(ev.thread));
    if (!li) return;
    if (ev.type === "thread.pinned") this.showPinned(li, Boolean(ev.pinned));
    else this.showArchived(li, Boolean(ev.archived));
  }

  findItem(id) {
    for (const parent of [this.list, this.archived]) {
      for (const li of parent?.children || []) if (li.dataset.threadId === id) return li;
    }
    return null;
  }

  showPinned(li, pinned) {
    li.dataset.pinned = String(pinned);
    if (pinned && !li.dataset.pinnedAt) li.dataset.pinnedAt = new Date().toISOString();
    if (!pinned) delete li.dataset.pinnedAt;
    this.refreshButtons(li);
    this.regroup();
  }

  showArchived(li, archived) {
    if (archived) {
      li.dataset.archived = "true";
      li.dataset.pinned = "false";
      delete li.dataset.pinnedAt;
      delete li.dataset.groupLabel;
      this.archived?.prepend(li);
    } else {
      delete li.dataset.archived;
      this.list.append(li);
      this.list.hidden = false;
    }
    this.refreshButtons(li);
    this.regroup();
  }

  refreshButtons(li) {
    const pin = li.querySelector(".thread-pin");
    const archive = li.querySelector(".thread-archive");
    const archived = li.dataset.archived === "true";
    if (pin) {
      pin.hidden = archived;
      pin.setAttribute("aria-pressed", String(li.dataset.pinned === "true"));
      pin.title = li.dataset.pinned === "true" ? _("Unpin") : _("Pin");
    }
    if (archive) {
      archive.replaceChildren(icon(archived ? "unarchive" : "archive"));
      archive.title = archived ? _("Unarchive") : _("Archive");
    }
    // Each a whole phrase: the verb's form and the word order differ between languages.
    const label = (b, phrase) =>
      b && b.setAttribute("aria-label", format(phrase, { title: li.querySelector(".thread-title")?.textContent || _("chat") }));
    label(pin, _("Pin “%(title)s”"));
    label(archive, archived ? _("Unarchive “%(title)s”") : _("Archive “%(title)s”"));
  }

  async setFlag(li, action, value) {
    const key = action === "pin" ? "pinned" : "archived";
    try {
      await postJson(`${this.hrefFor(li.dataset.threadId)}${action}`, { [key]: value });
    } catch (err) {
      const failed = action === "pin" ? (value ? _("Could not pin: %(reason)s") : _("Could not unpin: %(reason)s")) : value ? _("Could not archive: %(reason)s") : _("Could not unarchive: %(reason)s");
      this.setStatus(format(failed, { reason: err.message }));
      return;
    }
    // The event reaches every tab, this one too; show it now rather than wait for it.
    this.applyEvent({ type: `thread.${key}`, thread: li.dataset.threadId, [key]: value });
    li.querySelector(action === "pin" ? ".thread-pin" : ".thread-archive")?.focus();
  }

  // --- search -------------------------------------------------------------------------

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

  // --- rename and delete ----------------------------------------------------------------

  decorate(li) {
    if (!li.classList?.contains("thread-item") || li.querySelector(".thread-actions")) return;
    const actions = el("div", "thread-actions");
    const iconButton = (name, className, [label, spoken], onClick) => {
      const b = button("", `button subtle icon-button ${className}`, onClick);
      b.append(icon(name));
      b.title = label;
      b.setAttribute("aria-label", spoken);
      return b;
    };
    const pin = iconButton("pin", "thread-pin", [_("Pin"), _("Pin chat")], () => this.setFlag(li, "pin", li.dataset.pinned !== "true"));
    const archive = iconButton("archive", "thread-archive", [_("Archive"), _("Archive chat")], () =>
      this.setFlag(li, "archive", li.dataset.archived !== "true"),
    );
    const rename = iconButton("edit", "thread-rename", [_("Rename"), _("Rename chat")], () => this.startRename(li));
    const remove = iconButton("trash", "thread-delete", [_("Delete"), _("Delete chat")], () => this.remove(li));
    actions.append(pin, archive, rename, remove);
    const title = () => li.querySelector(".thread-title")?.textContent || _("this chat");
    rename.addEventListener("focus", () => rename.setAttribute("aria-label", format(_("Rename “%(title)s”"), { title: title() })));
    remove.addEventListener("focus", () => remove.setAttribute("aria-label", format(_("Delete “%(title)s”"), { title: title() })));
    li.append(actions);
    this.refreshButtons(li);
  }

  startRename(li) {
    if (li.querySelector(".thread-rename-form")) return;
    const titleEl = li.querySelector(".thread-title");
    const link = li.querySelector(".thread-link");
    const form = el("form", "thread-rename-form");
    form.noValidate = true; // the form says what is wrong itself, not the browser's bubble
    const input = el("input", "thread-rename-input");
    Object.assign(input, { type: "text", value: titleEl ? titleEl.textContent : "", maxLength: TITLE_MAX, required: true });
    input.setAttribute("aria-label", _("New title"));
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
        error.textContent = format(_("A title has 1 to %(max)s characters."), { max: TITLE_MAX });
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
    const title = li.querySelector(".thread-title")?.textContent || _("this chat");
    const sure = await confirmDialog({
      title: _("Delete this chat?"),
      body: format(_("“%(title)s” and its messages are deleted; this cannot be undone."), { title }),
      confirm: _("Delete"),
      danger: true,
    });
    if (!sure) return;
    const id = li.dataset.threadId;
    try {
      await postJson(`${this.hrefFor(id)}delete`, {});
    } catch (err) {
      if (!/no longer exists/.test(err.message)) {
        this.setStatus(format(_("Could not delete: %(reason)s"), { reason: err.message }));
        return;
      }
    }
    li.remove();
    if (!this.list.children.length) this.list.hidden = true;
    this.leaveIfGone(id);
  }

  /**
   * The thread `id` is gone (deleted in this tab, or another tab says so): if it is the one open, go home, once.
   * Both happen in the tab that deletes; a second navigation would cancel the first halfway.
   */
  leaveIfGone(id) {
    if (id !== this.currentId() || this.leaving) return;
    this.leaving = true;
    window.location.assign(this.homeUrl);
  }
}
