// The empty chat's starting prompts (docs/ui.md, "Starting prompts"): a few buttons under the agents that send their
// text as the first message, as ChatGPT's and Claude's suggestion chips do. The server gives them by agent slug
// ("" for no agent; json_script "starter-prompts", chat/starters.py): the agent's own (`agent`), else suggestions for
// the demo model (`demo`) or a real one (`model`). They are the admin's or a person's text: textContent only.

import { button } from "./dom.js";

export class Starters {
  /**
   * @param {object} o
   * @param {HTMLElement|null} o.root  #starters, inside the empty state (which goes when the chat has a message)
   * @param {object|null} o.prompts  {slug: {agent?: string[], demo?: string[], model?: string[]}}
   * @param {(text: string) => void} o.onPick
   */
  constructor({ root, prompts, onPick }) {
    Object.assign(this, { root, onPick });
    this.prompts = prompts && typeof prompts === "object" ? prompts : {};
    this.shown = null; // the texts on the buttons now, to redraw only on a change
  }

  /** Shows the prompts for `agent` (a slug, or "" / undefined for none) with the demo model or a real one. */
  show({ agent, isDemo }) {
    if (!this.root) return;
    const entry = this.prompts[agent || ""] || this.prompts[""] || {};
    const listed = Array.isArray(entry.agent) && entry.agent.length ? entry.agent : isDemo ? entry.demo : entry.model;
    const texts = (Array.isArray(listed) ? listed : []).filter((t) => typeof t === "string" && t.trim());
    if (this.shown && this.shown.join("\n") === texts.join("\n")) return;
    this.shown = texts;
    this.root.replaceChildren(...texts.map((text) => button(text, "starter", () => this.onPick(text))));
    this.root.hidden = !texts.length;
  }
}
