// What a screen reader is told of a run: once, when the answer is finished (or stops, fails, or waits for the
// person's decision or input), in the page's one live region (#announcer, role=status). The conversation itself is
// not a live region: every streamed token would be read out as it lands (docs/ui.md, "Accessibility").

import { _, _f } from "./i18n.js";

const MAX_CHARS = 600; // a long answer is read in part; the whole of it stays in the conversation

/** The finished answer's text as the page shows it (Markdown rendered, tool cards and reasoning left out). */
function lastAnswerText(messages) {
  const answers = messages?.querySelectorAll(".message.assistant") || [];
  const last = answers[answers.length - 1];
  if (!last) return "";
  const parts = [...last.querySelectorAll(".message-text")].map((node) => node.textContent.trim());
  return parts.filter(Boolean).join(" ").replace(/\s+/g, " ");
}

function shorten(text) {
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS - 1)}…` : text;
}

export class Announcer {
  constructor(region, messages) {
    this.region = region;
    this.messages = messages;
  }

  /** Says `text`, once: a new paragraph each time, so the same words twice are still read twice. */
  say(text) {
    if (!this.region || !text) return;
    const line = document.createElement("p");
    line.textContent = text;
    this.region.replaceChildren(line);
  }

  /** Called with each event of the thread, after the view applied it. */
  heard(ev) {
    switch (ev.type) {
      case "run.completed": {
        const text = lastAnswerText(this.messages);
        this.say(text ? _f("Answer: %(text)s", { text: shorten(text) }) : _("The answer is done."));
        break;
      }
      case "run.failed":
        this.say(shorten(_f("The answer failed: %(error)s", { error: typeof ev.error === "string" ? ev.error : "" })));
        break;
      case "run.cancelled":
        this.say(_("The answer was stopped."));
        break;
      case "run.waiting": {
        const calls = Array.isArray(ev.tool_calls) ? ev.tool_calls.length : 0;
        this.say(calls > 1
          ? _f("%(count)s tool calls wait for your decision.", { count: calls })
          : _("A tool call waits for your decision."));
        break;
      }
      case "tool_call.input_requested":
        this.say(shorten(_f("A tool asks for your input: %(question)s", {
          question: typeof ev.message === "string" ? ev.message : "",
        })));
        break;
      default:
        break;
    }
  }
}
