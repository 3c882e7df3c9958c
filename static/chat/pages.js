// A long conversation a page at a time (docs/ui.md, "Long conversations"): the paged snapshot holds the newest
// messages and a cursor (`earlier`); the page before the cursor is read (GET /t/<id>/messages?before=) as the
// person scrolls near the top, or presses "Load earlier messages", and goes in above what is there without moving
// what they look at.

import { button, el } from "./dom.js";
import { _, format, ngettext } from "./i18n.js";

const key = (id) => String(id);
// How close to the top (px above the visible part) the next page starts loading: before the person gets there.
const AHEAD = 800;

/** The element of the conversation a message sits in at the top level: its answer's, or its own. */
export const outerOf = (view) => (view.answer && view.answer.segments[0] === view ? view.answer.root : view.root);

/**
 * Builds snapshot messages (whole turns) and puts them above the conversation (below the earlier-pages bar), keeping
 * what the person looks at where it is: scroll anchoring does it when it can, else the scroll moves by what went in.
 * Following the bottom, it stays there. Returns how many messages went in.
 */
export function insertOlder(view, messages) {
  const fragment = document.createDocumentFragment();
  const built = new Map();
  fragment.append(...view.buildTurns(messages, built));
  const summary = view.summary;
  if (summary && !summary.node.isConnected && built.has(key(summary.before))) {
    outerOf(built.get(key(summary.before))).before(summary.node);
  }
  view.messages = new Map([...built, ...view.messages]); // kept in the conversation's order
  const scroller = view.container;
  const { scrollTop, scrollHeight, clientHeight } = scroller;
  // Following the bottom only when there: a keyboard's focus on the bar scrolls up without unsticking it.
  const follow = view.scroll.stick && scrollHeight - scrollTop - clientHeight <= view.scroll.slack;
  if (!follow) view.scroll.stick = false;
  const bar = scroller.firstElementChild?.classList.contains("earlier-pages") ? scroller.firstElementChild : null;
  if (bar) bar.after(fragment);
  else scroller.prepend(fragment);
  if (follow) view.scroll.changed();
  else if (scroller.scrollTop === scrollTop) scroller.scrollTop = scrollTop + (scroller.scrollHeight - scrollHeight);
  settleAfterLayout(built);
  return built.size;
}

/**
 * Once the browser has laid out and painted the messages just put in (their sizes remembered), they are no longer laid
 * out while out of sight (app.css, `.settled`): a long conversation's next page then lays out only itself.
 */
function settleAfterLayout(built) {
  const roots = new Set([...built.values()].map(outerOf));
  requestAnimationFrame(() => requestAnimationFrame(() => {
    for (const root of roots) if (root.isConnected) root.classList.add("settled");
  }));
}

/** Reads a page: resolves to {messages, earlier}; rejects with an Error whose message is for the person, and
 * `stale` set when the cursor no longer names a shown message (the conversation changed: start again). */
export async function fetchPage(url) {
  let response;
  try {
    response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  } catch {
    throw new Error(_("Could not load earlier messages: the connection failed."));
  }
  const body = await response.json().catch(() => null);
  if (!response.ok || !body || !Array.isArray(body.messages)) {
    const error = new Error((body && body.error) || format(_("Could not load earlier messages (HTTP %(status)s)."), { status: response.status }));
    error.stale = response.status === 400;
    throw error;
  }
  return body;
}

export class EarlierPages {
  /**
   * @param {object} opts
   * @param {import("./thread.js").ThreadView} opts.view
   * @param {(before: number) => Promise<{messages: object[], earlier: number|null}>} opts.load  the page before it
   * @param {(messages: object[]) => void} opts.onLoaded  a page went in (versions, usage, controls follow it)
   * @param {() => void} opts.onStale  the cursor is gone: a fresh snapshot is needed
   */
  constructor({ view, load, onLoaded = () => {}, onStale = () => {} }) {
    Object.assign(this, { view, load, onLoaded, onStale });
    this.cursor = null;
    this.loading = false;
    this.bar = el("div", "earlier-pages");
    this.status = el("p", "earlier-pages-status");
    this.status.setAttribute("role", "status");
    this.status.tabIndex = -1;
    this.button = button(_("Load earlier messages"), "button subtle small earlier-pages-load", () => this.loadMore());
    this.bar.append(this.status, this.button);
    this.watch = typeof IntersectionObserver === "function"
      ? new IntersectionObserver((entries) => {
        if (entries.some((entry) => entry.isIntersecting)) this.loadMore();
      }, { root: view.container, rootMargin: `${AHEAD}px 0px 0px 0px` })
      : null;
  }

  /** After a snapshot (the view was just reset): its `earlier` cursor, and the bar at the top while there is one. */
  reset(snapshot) {
    this.cursor = typeof snapshot?.earlier === "number" ? snapshot.earlier : null;
    this.loading = false;
    this.generation = this.view.generation;
    this.watch?.disconnect();
    this.bar.remove();
    if (this.cursor === null) return;
    this.show("", true);
    this.view.container.prepend(this.bar);
    this.watch?.observe(this.bar);
  }

  /** thread.branch_changed: when the message the cursor names left the view, the new branch's first one takes it. */
  branchChanged(ev) {
    if (this.cursor === null || !(Array.isArray(ev.removed) && ev.removed.map(key).includes(key(this.cursor)))) return;
    const first = Array.isArray(ev.messages) ? ev.messages[0] : null;
    if (first && first.id !== undefined && first.id !== null) this.cursor = first.id;
    else this.onStale();
  }

  show(text, offer) {
    this.status.textContent = text;
    this.status.hidden = !text;
    this.button.hidden = !offer;
  }

  /** The page before the cursor, once at a time; then again while the top is still in reach (a short page). */
  async loadMore() {
    if (this.loading || this.cursor === null) return;
    this.loading = true;
    const { generation } = this.view;
    this.button.setAttribute("aria-disabled", "true");
    this.bar.setAttribute("aria-busy", "true");
    this.show(_("Loading earlier messages…"), true);
    let page;
    try {
      page = await this.load(this.cursor);
    } catch (error) {
      if (generation !== this.view.generation) return;
      this.loading = false;
      this.idle();
      this.show(format(_("%(reason)s Try again."), { reason: error.message }), true);
      if (error.stale) this.onStale();
      return;
    }
    if (generation !== this.view.generation) return; // a snapshot replaced the view meanwhile: it has its own cursor
    this.loading = false;
    this.idle();
    const messages = page.messages.filter((m) => m && !this.view.messages.has(key(m.id)));
    const count = insertOlder(this.view, messages);
    this.cursor = typeof page.earlier === "number" ? page.earlier : null;
    this.onLoaded(messages);
    if (this.cursor === null) {
      const focused = document.activeElement === this.button;
      this.watch?.disconnect();
      this.show(_("This is the start of the conversation."), false);
      if (focused) this.status.focus();
      return;
    }
    this.show(format(ngettext("Loaded %(count)s earlier message.", "Loaded %(count)s earlier messages.", count), { count }), true);
    requestAnimationFrame(() => {
      if (this.nearTop()) this.loadMore();
    });
  }

  idle() {
    this.button.removeAttribute("aria-disabled");
    this.bar.removeAttribute("aria-busy");
  }

  /** The bar is within AHEAD of the visible part of the conversation. */
  nearTop() {
    if (!this.bar.isConnected || !this.watch) return false;
    const box = this.view.container.getBoundingClientRect();
    return this.bar.getBoundingClientRect().bottom > box.top - AHEAD;
  }
}
