// A mark beside each message's author (docs/ui.md, Messages): the person's initial on theirs; on an answer the
// agent's initial, or a robot for a model without an agent, named on hover (its tooltip) with the agent and the
// model. The marks are decoration (aria-hidden): the message's "You" / "Assistant" says who wrote it, and the
// header names the agent and the model.
//
// Messages are added by several modules (the server's first screen, the snapshot, live events): one
// MutationObserver on the conversation marks whatever comes, so none of them needs to know about marks.

import { el } from "./dom.js";
import { _, _f } from "./i18n.js";
import { icon } from "./icons.js";

const initial = (name) => (name.trim()[0] || "?").toLocaleUpperCase();

export class AuthorMarks {
  /**
   * @param {HTMLElement|null} messages  #messages
   * @param {{person: () => string, agent: () => string, model: () => string}} names  read when a mark is made,
   *   and again when the header changes (refresh)
   */
  constructor(messages, names) {
    Object.assign(this, { messages, names });
    if (!messages) return;
    this.markAll();
    let queued = false;
    new MutationObserver(() => {
      if (queued) return;
      queued = true;
      queueMicrotask(() => {
        queued = false;
        this.markAll();
      });
    }).observe(messages, { childList: true });
  }

  markAll() {
    for (const meta of this.messages.querySelectorAll(":scope > .message > .message-meta")) {
      if (!meta.querySelector(".author-mark")) meta.prepend(this.mark(meta.parentElement));
    }
  }

  /** The agent or the model changed (the header's labels): answers' marks say the new names. */
  refresh() {
    for (const mark of this.messages?.querySelectorAll(".author-mark") || []) mark.replaceWith(this.mark(mark.closest(".message")));
  }

  mark(article) {
    const mark = el("span", "author-mark");
    mark.setAttribute("aria-hidden", "true");
    if (article.classList.contains("user")) {
      const person = this.names.person();
      mark.classList.add("author-person");
      mark.textContent = person ? initial(person) : "";
      if (!person) mark.append(icon("person"));
      mark.title = person ? _f("You (%(name)s)", { name: person }) : _("You");
      return mark;
    }
    const agent = this.names.agent();
    const model = this.names.model();
    mark.classList.add(agent ? "author-agent" : "author-model");
    if (agent) mark.textContent = initial(agent);
    else mark.append(icon("bot"));
    mark.title = agent && model ? _f("%(agent)s, on %(model)s", { agent, model }) : agent || model || _("Assistant");
    return mark;
  }
}
