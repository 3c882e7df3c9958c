// The model picker in the thread page's header, and the notes a run leaves in the conversation (e.g. "the oldest
// messages were left out to fit the model's context window").
// The models come from the page (json_script "available-models"): ids, names and labels, never a key.

const NOTICE_COOKIE = "agentweb_demo_notice";
const noticeDismissed = () => document.cookie.split(";").some((c) => c.trim() === `${NOTICE_COOKIE}=dismissed`);

import { ListPicker } from "./picker.js";

export class ModelPicker {
  /**
   * @param {object} o
   * @param {HTMLSelectElement|null} o.select  #model-picker
   * @param {HTMLElement|null} o.label  #model-label, the plain label shown when there is nothing to pick from
   * @param {HTMLElement|null} o.banner  #demo-banner: shown only while the thread's model is the demo model
   * @param {Array<{id: string, label: string, is_demo: boolean}>} o.models
   * @param {{id?: string, label?: string, is_demo?: boolean}} o.current  the thread's model, or the default
   * @param {(id: string) => string|null|false} o.onPick  sends the choice: a ref to match an error against, null
   *   when there is nothing to send yet (a new chat: the choice goes with the first message), false when it could
   *   not be sent
   * @param {(info: object) => void} o.onShow  the model shown changed
   */
  constructor({ select, label, banner, models, current, onPick, onShow = () => {} }) {
    Object.assign(this, { select, label, banner, onPick, onShow });
    this.models = Array.isArray(models) ? models.filter((m) => m && typeof m.id === "string") : [];
    this.current = current || {};
    this.initial = this.current; // the page's model: the default one on the empty chat
    this.chosen = false; // the person picked a model here (a new chat sends it with its first message)
    this.pending = null; // {ref, previous}: a choice sent and not yet confirmed
    // The demo notice's ✕: hidden from then on in this browser (a year's cookie the server reads too).
    banner?.querySelector(".demo-banner-close")?.addEventListener("click", () => {
      document.cookie = `${NOTICE_COOKIE}=dismissed; path=/; max-age=31536000; SameSite=Lax`;
      banner.hidden = true;
      document.getElementById("composer-input")?.focus();
    });
    this.offered = Boolean(select && this.models.length);
    if (this.offered) {
      for (const m of this.models) select.append(this.option(m));
      if (label) label.hidden = true;
      select.addEventListener("change", () => this.picked());
      // The <select> stays hidden, holding the value; the person uses the styled list (picker.js).
      const demo = new Set(this.models.filter((m) => m.is_demo).map((m) => m.id));
      this.face = new ListPicker(select, { label: "Model", note: (id) => (demo.has(id) ? "offline demo" : "") });
    }
    this.show(this.current);
  }

  option(m) {
    const node = document.createElement("option");
    node.value = m.id;
    node.textContent = typeof m.label === "string" && m.label ? m.label : m.id;
    return node;
  }

  /** The id of the model chosen, or null when the page offers no choice. */
  get value() {
    return this.offered ? this.select.value : null;
  }

  /**
   * Whether a new chat sends the model shown with its first message: when the person picked it here, or when it is
   * their own default from the settings page (the page marks it `personal`); otherwise the server decides (the
   * agent's model, else the site's default).
   */
  get sendsChoice() {
    return this.chosen || Boolean(this.current && this.current.personal);
  }

  get isDemo() {
    return Boolean(this.current && this.current.is_demo);
  }

  /** Shows `info` ({id, label, is_demo}) as the thread's model. */
  show(info) {
    if (!info || typeof info !== "object") return;
    this.current = info;
    if (this.offered && typeof info.id === "string") {
      if (![...this.select.options].some((o) => o.value === info.id)) this.select.append(this.option(info));
      this.select.value = info.id;
      this.face?.sync();
    }
    if (this.label && typeof info.label === "string") this.label.textContent = info.label;
    if (this.banner) this.banner.hidden = !info.is_demo || noticeDismissed();
    this.onShow(info);
  }

  /**
   * The empty chat: shows the model of the agent picked (`id`, "" for the default), unless the person picked a model
   * themselves, which wins (agents/services.py model_choice).
   */
  follow(id) {
    if (this.chosen) return;
    this.show((id && this.models.find((m) => m.id === id)) || this.initial);
  }

  picked() {
    this.chosen = true;
    const id = this.select.value;
    const previous = this.current;
    this.show(this.models.find((m) => m.id === id) || { id, label: id, is_demo: false });
    const ref = this.onPick(id);
    if (ref === false) this.show(previous);
    else this.pending = ref ? { ref, previous } : null;
  }

  /** `thread.model_changed`, from this tab or another. */
  changed(ev) {
    this.pending = null;
    this.show(ev.model);
  }

  /** An `error` answering the choice sent: the previous model is shown again. True when it was that error. */
  handleError(ev) {
    if (!this.pending || !ev.ref || ev.ref !== this.pending.ref) return false;
    this.show(this.pending.previous);
    this.pending = null;
    return true;
  }
}

/** A run's note (`run.note`, or a snapshot's `run.notes`) as a small line in the conversation. */
export function runNote(text) {
  const node = document.createElement("p");
  node.className = "message-note run-note";
  node.setAttribute("role", "status");
  node.textContent = String(text);
  return node;
}
