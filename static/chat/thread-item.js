// A sidebar entry (a chat's link, its title as text) and the badge of where a chat was started.

import { el } from "./dom.js";
import { _ } from "./i18n.js";

/** Where a chat was started, when not in a tab (Thread.source): its badge's word, its tooltip and what a screen
 * reader hears before the word (templates/chat/thread_source.html draws the same). */
export const ORIGINS = {
  api: { label: _("API"), title: _("Started from the API"), spoken: `${_("started from the")} ` },
  schedule: { label: _("Scheduled"), title: _("Started by a schedule"), spoken: `${_("started by a schedule:")} ` },
  trigger: { label: _("Triggered"), title: _("Started by a webhook trigger"), spoken: `${_("started by a webhook:")} ` },
};

/** The badge of `source`, or null for a chat typed in a tab (or an origin this page does not know). */
export function originBadge(source) {
  const origin = Object.hasOwn(ORIGINS, source) ? ORIGINS[source] : null;
  if (!origin) return null;
  const badge = el("span", "badge thread-source");
  badge.dataset.origin = source;
  badge.title = origin.title;
  badge.append(el("span", "visually-hidden", origin.spoken), origin.label);
  return badge;
}

/** A sidebar entry; the title goes in as text. `source`: where the chat was started; one not typed in a tab is
 * marked as such in words. */
export function threadListItem({ id, title, href, current = false, source = "chat" }) {
  const item = el("li", "thread-item");
  item.dataset.threadId = String(id);
  const link = el("a", "thread-link");
  link.href = href;
  link.append(el("span", "thread-title", title || _("Untitled")));
  const badge = originBadge(source);
  if (badge) {
    item.dataset.source = source;
    link.append(badge);
  }
  if (current) link.setAttribute("aria-current", "page");
  item.append(link);
  return item;
}
