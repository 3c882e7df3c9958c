// The sidebar's own actions: pin, archive, rename (inline), delete (after an in-page dialog); the list's order and
// date groups (Pinned, then thread-dates.js's) and each chat's time, kept current. Its search and origin filter are
// thread-search.js's. Titles are untrusted: they only ever go in through textContent / value.

import { el, button } from "./dom.js";
import { confirmDialog } from "./dialog.js";
import { icon } from "./icons.js";
import { postJson } from "./post-json.js";
import { dateGroup, relativeTime } from "./thread-dates.js";
import { ThreadSearch } from "./thread-search.js";
import { _, format, locale } from "./i18n.js";

const CLOCK_MS = 30_000;

// The styles of the sidebar actions and the turn actions and version switchers (versions.js), next to this module.
if (!document.querySelector("link[data-sidebar-css]")) {
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = new URL("./sidebar.css", import.meta.url).href;
  link.dataset.sidebarCss = "";
  document.head.append(link);
}
const TITLE_MAX = 200;

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
    this.leaving = false; // set once this tab is on its way home from a chat that is gone (leaveIfGone)
    this.search = new ThreadSearch({
      root, list, archived: this.archived, homeUrl, hrefFor,
      findItem: (id) => this.findItem(id),
      regroup: () => this.regroup(),
    });
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
      if (sorted.some((li, i) => li !== items[i]) && !this.search?.query) this.list.append(...sorted);
      let last = null;
      for (const li of sorted) {
        const time = li.querySelector(".thread-time");
        if (time) {
          const text = relativeTime(when(li), now);
          if (time.textContent !== text) time.textContent = text;
          time.title = when(li).toLocaleString(locale());
        }
        const group = li.dataset.pinned === "true" ? _("Pinned") : dateGroup(when(li), now);
        if (li.hidden || this.search.filteredOut(li)) {
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
      this.search.setStatus(format(failed, { reason: err.message }));
      return;
    }
    // The event reaches every tab, this one too; show it now rather than wait for it.
    this.applyEvent({ type: `thread.${key}`, thread: li.dataset.threadId, [key]: value });
    li.querySelector(action === "pin" ? ".thread-pin" : ".thread-archive")?.focus();
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
        this.search.setStatus(format(_("Could not delete: %(reason)s"), { reason: err.message }));
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
