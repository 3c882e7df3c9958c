// The "Show artifact" part of a tool card (tool-card.js): the stored artifact as indented JSON text, never as
// markup, and a download of it.

import { button, el } from "./dom.js";
import { withoutImageData } from "./images.js";
import { _, format, formatNumber } from "./i18n.js";

/** "512 bytes", "3.4 KB", "1.2 MB". */
export function formatBytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return "";
  const one = { minimumFractionDigits: 1, maximumFractionDigits: 1 };
  if (n < 1000) return format(_("%(n)s bytes"), { n: formatNumber(n) });
  if (n < 1_000_000) return format(_("%(n)s KB"), { n: formatNumber(n / 1000, one) });
  return format(_("%(n)s MB"), { n: formatNumber(n / 1_000_000, one) });
}

/**
 * The "Show artifact" part of a tool card: fetches the artifact once, shows it as indented JSON text, and offers
 * it as a download (a Blob URL). `load()` resolves to the endpoint's answer ({artifact} or {truncated, preview,
 * size, limit}) or rejects with an Error whose message is for the person.
 */
export class ArtifactViewer {
  constructor({ name, load, idBase }) {
    this.name = name;
    this.load = load;
    this.data = null;
    this.loading = false;
    this.blobUrl = null;
    this.root = el("section", "tool-section tool-artifact");
    this.root.hidden = true;
    const title = el("div", "tool-section-title", _("Artifact"));
    const note = el("p", "tool-note", _("The tool also stored an artifact: data kept out of the model's context."));
    this.textEl = el("pre", "tool-artifact-text");
    this.textEl.id = `${idBase}-artifact`;
    this.textEl.hidden = true;
    this.toggle = button(_("Show artifact"), "button small tool-artifact-toggle", () => this.toggled());
    this.toggle.setAttribute("aria-expanded", "false");
    this.toggle.setAttribute("aria-controls", this.textEl.id);
    this.download = el("a", "button small tool-artifact-download", _("Download"));
    this.download.hidden = true;
    const actions = el("div", "tool-artifact-actions");
    actions.append(this.toggle, this.download);
    this.statusEl = el("p", "tool-artifact-status");
    this.statusEl.setAttribute("role", "status");
    this.statusEl.hidden = true;
    this.root.append(title, note, actions, this.statusEl, this.textEl);
  }

  show(available) {
    this.root.hidden = !available;
  }

  setStatus(text, kind = "") {
    this.statusEl.textContent = text;
    this.statusEl.dataset.kind = kind;
    this.statusEl.hidden = !text;
  }

  async toggled() {
    if (this.loading) return;
    if (!this.textEl.hidden) {
      this.textEl.hidden = true;
      this.toggle.textContent = _("Show artifact");
      this.toggle.setAttribute("aria-expanded", "false");
      return;
    }
    if (!this.data) {
      if (!this.load) {
        this.setStatus(_("The artifact cannot be loaded here."), "error");
        return;
      }
      this.loading = true;
      this.toggle.disabled = true;
      this.toggle.setAttribute("aria-busy", "true");
      this.setStatus(_("Loading the artifact…"));
      try {
        this.data = await this.load();
        this.fill(this.data);
      } catch (error) {
        this.setStatus(error instanceof Error && error.message ? error.message : _("The artifact could not be loaded."), "error");
        return;
      } finally {
        this.loading = false;
        this.toggle.disabled = false;
        this.toggle.removeAttribute("aria-busy");
      }
    }
    this.textEl.hidden = false;
    this.toggle.textContent = _("Hide artifact");
    this.toggle.setAttribute("aria-expanded", "true");
  }

  /** The artifact as text (never as markup) and a download of that text. */
  fill(data) {
    const truncated = Boolean(data && data.truncated);
    let text;
    if (truncated) {
      text = typeof data.preview === "string" ? data.preview : "";
      this.setStatus(
        format(_("The artifact is %(size)s: only its first %(limit)s is shown and downloaded."), { size: formatBytes(data.size), limit: formatBytes(data.limit) }),
        "truncated",
      );
    } else {
      // Images show above, as images: their base64 would only fill the viewer. The download keeps everything.
      text = JSON.stringify(data ? data.artifact : null, null, 2) ?? "null";
      this.setStatus("");
    }
    const shown = truncated ? text : (JSON.stringify(withoutImageData(data ? data.artifact : null), null, 2) ?? "null");
    this.textEl.textContent = shown;
    this.dispose();
    this.blobUrl = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    this.download.href = this.blobUrl;
    const safeName = this.name.replace(/[^A-Za-z0-9_-]/g, "_") || "tool";
    this.download.download = `${safeName}-artifact${truncated ? "-partial" : ""}.json`;
    this.download.textContent = truncated ? _("Download the part shown") : _("Download");
    this.download.hidden = false;
  }

  dispose() {
    if (this.blobUrl) URL.revokeObjectURL(this.blobUrl);
    this.blobUrl = null;
  }
}
