// A chat's date group in the sidebar (Today, Yesterday, Previous 7 days, Previous 30 days, then by month) and its
// time as a person reads it ("5 min ago"), in the browser's own time zone and language.

import { _, format, locale } from "./i18n.js";

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
