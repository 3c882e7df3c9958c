// The chat page's furniture that no conversation logic depends on (issue 41): the sidebar as a drawer on a phone,
// "Jump to latest", the attachment viewer, the authors' marks, and the composer's hint on a touch screen. app.js
// calls setUpPage once the conversation's view exists.

import { AuthorMarks } from "./authors.js";
import { SidebarDrawer } from "./drawer.js";
import { JumpToLatest } from "./jump.js";
import { AttachmentViewer } from "./viewer.js";

const $ = (id) => document.getElementById(id);

/** @param {{scroll: {stick: boolean, toBottom: () => void}}} view  the ThreadView (its AutoScroller) */
export function setUpPage(view) {
  new SidebarDrawer({ sidebar: $("sidebar"), toggle: $("sidebar-toggle"), behind: [document.querySelector(".chat-main")] });
  new JumpToLatest({ scroller: $("messages"), button: $("jump-latest"), follower: view.scroll, input: $("composer-input") });
  new AttachmentViewer($("messages"));
  const agentLabel = $("agent-label");
  const modelLabel = $("model-label");
  const marks = new AuthorMarks($("messages"), {
    person: () => $("user-name")?.textContent.trim() || "",
    agent: () => (agentLabel && !agentLabel.hidden ? agentLabel.textContent.trim() : ""),
    model: () => modelLabel?.textContent.trim() || "",
  });
  const refresh = new MutationObserver(() => marks.refresh());
  for (const node of [agentLabel, modelLabel]) {
    if (node) refresh.observe(node, { childList: true, characterData: true, subtree: true, attributes: true, attributeFilter: ["hidden"] });
  }
  touchHint($("composer-input"));
}

/**
 * On a touch screen (no hover: no physical keyboard to speak of) "Enter to send, Shift+Enter for a new line" means
 * nothing: the box's placeholder drops it. Follows the device if that changes (a keyboard attached to a tablet).
 */
function touchHint(input) {
  if (!input || !input.dataset.touchPlaceholder) return;
  const full = input.placeholder;
  const touch = matchMedia("(hover: none)");
  const apply = () => { input.placeholder = touch.matches ? input.dataset.touchPlaceholder : full; };
  touch.addEventListener("change", apply);
  apply();
}
