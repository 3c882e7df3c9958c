// The sidebar as a drawer on a phone (docs/ui.md, On a phone): **Chats** in the header, or a swipe inward from the
// screen's starting edge (the left one, the right one in a right-to-left language), slides it over the
// conversation; inside, Tab and Shift+Tab stay in it (the conversation is inert), and Escape, a tap on the shade
// beside it, or a swipe back towards that edge close it, the focus going back to **Chats**. While open, #sidebar (a
// plain box around the <nav>) is the modal dialog, so the navigation landmark inside keeps its role. On a wide
// screen the sidebar is always there and none of this applies.

import { _ } from "./i18n.js";

const NARROW = "(max-width: 720px)";
const EDGE = 24; // px from the starting edge (left, or right in a right-to-left page) where a swipe opens it
const SWIPE = 60; // px a swipe must travel, mostly sideways

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea, summary, [tabindex]:not([tabindex="-1"])';

export class SidebarDrawer {
  /**
   * @param {object} o
   * @param {HTMLElement|null} o.sidebar  #sidebar
   * @param {HTMLButtonElement|null} o.toggle  #sidebar-toggle
   * @param {HTMLElement[]} o.behind  what the drawer covers, made inert while it is open
   */
  constructor({ sidebar, toggle, behind }) {
    Object.assign(this, { sidebar, toggle, behind: behind.filter(Boolean) });
    if (!sidebar || !toggle) return;
    this.narrow = matchMedia(NARROW);
    this.shade = document.createElement("div");
    this.shade.className = "drawer-shade";
    this.shade.hidden = true;
    this.shade.addEventListener("click", () => this.close());
    sidebar.after(this.shade);
    toggle.addEventListener("click", () => (this.isOpen ? this.close() : this.open()));
    // Capturing: an Escape is judged before the search box clears itself with it (sidebar.js).
    sidebar.addEventListener("keydown", (e) => this.keydown(e), true);
    // Growing the window past a phone's width with the drawer open: the sidebar is a column again.
    this.narrow.addEventListener("change", () => { if (!this.narrow.matches && this.isOpen) this.close(false); });
    this.swipes();
  }

  get isOpen() {
    return this.sidebar.classList.contains("open");
  }

  open() {
    if (!this.narrow.matches) return;
    this.sidebar.classList.add("open");
    this.sidebar.setAttribute("role", "dialog");
    this.sidebar.setAttribute("aria-modal", "true");
    this.sidebar.setAttribute("aria-label", _("Chats"));
    this.toggle.setAttribute("aria-expanded", "true");
    this.shade.hidden = false;
    for (const node of this.behind) node.inert = true;
    (this.sidebar.querySelector('[aria-current="page"]') || this.focusables()[0])?.focus();
  }

  close(refocus = true) {
    this.sidebar.classList.remove("open");
    this.sidebar.removeAttribute("role");
    this.sidebar.removeAttribute("aria-modal");
    this.sidebar.removeAttribute("aria-label"); // a plain box again: the <nav> inside carries the name
    this.toggle.setAttribute("aria-expanded", "false");
    this.shade.hidden = true;
    for (const node of this.behind) node.inert = false;
    if (refocus) this.toggle.focus();
  }

  focusables() {
    return [...this.sidebar.querySelectorAll(FOCUSABLE)].filter((n) => n.getClientRects().length > 0 && !n.closest("[hidden]"));
  }

  keydown(e) {
    if (!this.isOpen) return;
    if (e.key === "Escape") {
      // A rename field, or a search with words in it, takes its own Escape (sidebar.js): cancel, clear.
      if (e.target.matches(".thread-rename-input") || (e.target.matches(".thread-search-input") && e.target.value)) return;
      e.preventDefault();
      this.close();
      return;
    }
    if (e.key !== "Tab") return;
    const items = this.focusables();
    if (!items.length) return;
    const first = items[0];
    const last = items[items.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  }

  /** How far `x` is from the edge the drawer comes from: the left one, or the right one in a right-to-left page. */
  fromEdge(x) {
    return getComputedStyle(this.sidebar).direction === "rtl" ? document.documentElement.clientWidth - x : x;
  }

  swipes() {
    let start = null;
    document.addEventListener("touchstart", (e) => {
      const t = e.touches[0];
      start = e.touches.length === 1 && this.narrow.matches ? { x: t.clientX, y: t.clientY } : null;
      if (start) start.drawer = this.isOpen || this.fromEdge(start.x) <= EDGE; // a swipe that may be the drawer's
    }, { passive: true });
    // A sideways swipe from the edge is also the browser's "Back" (Chromium's swipe navigation, which
    // overscroll-behavior does not stop): the drawer's own swipe is kept from it. Only such a swipe is held back;
    // every other touch scrolls as before.
    document.addEventListener("touchmove", (e) => {
      if (!start?.drawer || !e.cancelable) return;
      const t = e.touches[0];
      if (Math.abs(t.clientX - start.x) > Math.abs(t.clientY - start.y)) e.preventDefault();
    }, { passive: false });
    document.addEventListener("touchend", (e) => {
      if (!start) return;
      const t = e.changedTouches[0];
      // Measured inward from the starting edge: a right-to-left page's drawer comes from the right (app.css
      // places it with inset-inline), so there a swipe to the left opens it and one to the right closes it.
      const rtl = getComputedStyle(this.sidebar).direction === "rtl";
      const dx = (t.clientX - start.x) * (rtl ? -1 : 1);
      const dy = Math.abs(t.clientY - start.y);
      const from = start;
      start = null;
      if (Math.abs(dx) < SWIPE || dy > Math.abs(dx) / 2) return;
      if (dx > 0 && !this.isOpen && this.fromEdge(from.x) <= EDGE) this.open();
      else if (dx < 0 && this.isOpen) this.close();
    }, { passive: true });
  }
}
