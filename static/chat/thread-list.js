// The sidebar's list of the person's chats: adding, moving, renaming and removing entries as events say, the open
// chat marked, and the toggle that shows the sidebar on a narrow screen. Its dates, pins, archive and per-chat
// buttons are sidebar.js's (SidebarActions), which watches this list.

import { threadListItem } from "./thread-item.js";

export class Sidebar {
  /**
   * @param {HTMLElement} root       #sidebar
   * @param {HTMLElement} list       #thread-list
   * @param {HTMLElement|null} toggle #sidebar-toggle (shown on narrow screens)
   * @param {(id: string) => string} hrefFor
   */
  constructor(root, list, toggle, hrefFor) {
    this.root = root;
    this.list = list;
    this.hrefFor = hrefFor;
    if (toggle) {
      toggle.addEventListener("click", () => {
        const open = !root.classList.contains("open");
        root.classList.toggle("open", open);
        toggle.setAttribute("aria-expanded", open ? "true" : "false");
      });
    }
  }

  item(id) {
    for (const li of this.list.children) if (li.dataset.threadId === String(id)) return li;
    return null;
  }

  /** Adds a thread at the top (or moves it there); `current` marks it as the open one; `source` "api" marks a
   * chat started from the API. */
  add(id, title, current = false, source = "chat") {
    let li = this.item(id);
    if (!li) li = threadListItem({ id, title, href: this.hrefFor(id), source });
    else if (title) this.setTitle(id, title);
    this.list.prepend(li);
    this.list.hidden = false;
    const empty = this.root.querySelector(".thread-list-empty");
    if (empty) empty.remove();
    if (current) this.markCurrent(id);
  }

  moveToTop(id) {
    const li = this.item(id);
    if (li) this.list.prepend(li);
  }

  remove(id) {
    this.item(id)?.remove();
    if (!this.list.children.length) this.list.hidden = true;
  }

  setTitle(id, title) {
    const link = this.item(id)?.querySelector(".thread-title");
    if (link && title) link.textContent = title;
  }

  markCurrent(id) {
    for (const link of this.list.querySelectorAll(".thread-link")) {
      const isCurrent = link.parentElement.dataset.threadId === String(id);
      if (isCurrent) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }
}
