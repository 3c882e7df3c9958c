// Attachments: files picked, pasted or dropped into the composer are uploaded at once (POST /attachments/) and shown
// as chips (name, size, a thumbnail for an image, the text cap when it applies, ✕ to remove); message.send names
// them by id. A refused file (too big, its type, the quota, a broken PDF) gets the server's message in the
// composer and no chip. The thread shows a sent message's attachments (attachmentList).

import { el } from "./dom.js";
import { icon } from "./icons.js";
import { _, _f, format, formatNumber } from "./i18n.js";

function csrfToken() {
  for (const part of document.cookie.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === "csrftoken") return decodeURIComponent(rest.join("="));
  }
  return "";
}

export function humanSize(size) {
  const one = { minimumFractionDigits: 1, maximumFractionDigits: 1 };
  if (size < 1024) return format(_("%(n)s B"), { n: formatNumber(size) });
  if (size < 1024 * 1024) return format(_("%(n)s KB"), { n: formatNumber(size / 1024, one) });
  return format(_("%(n)s MB"), { n: formatNumber(size / (1024 * 1024), one) });
}

/** "first 20,000 of 54,321 characters" when the model reads only part of the file's text. */
export function capText(item) {
  if (!item.capped_at) return "";
  return format(_("the model reads the first %(shown)s of %(total)s characters"), {
    shown: formatNumber(item.capped_at),
    total: formatNumber(item.chars),
  });
}

function fileUrl(id) {
  return `/attachments/${encodeURIComponent(id)}/`;
}

/**
 * A sent message's attachments in the thread, as a gallery: images as thumbnails of one size with their names,
 * other files as named chips; each a link to the file, which a click opens in the page's viewer (viewer.js).
 */
export function attachmentList(items, urlFor = fileUrl) {
  const list = el("ul", "attachment-list");
  for (const item of items) {
    const li = el("li", `attachment ${item.kind === "image" ? "is-image" : "is-file"}`);
    const link = el("a", "attachment-link");
    link.href = urlFor(item.id);
    link.target = "_blank";
    link.rel = "noopener";
    if (item.kind === "image") {
      const img = el("img", "attachment-thumb");
      img.src = link.href;
      img.alt = ""; // the name follows as text: the link is read "red.png", not "red.png red.png"
      img.loading = "lazy";
      link.append(img, el("span", "attachment-name", item.name));
      link.title = _f("%(name)s (%(size)s): open it", { name: item.name, size: humanSize(item.size) });
    } else {
      link.append(icon("file", "icon attachment-icon"), el("span", "attachment-name", item.name));
      link.title = _f("Open %(name)s", { name: item.name });
    }
    li.append(link, el("span", "attachment-size", humanSize(item.size)));
    const cap = capText(item);
    if (cap) li.append(el("span", "attachment-cap", cap));
    li.dataset.attachmentId = item.id;
    list.append(li);
  }
  return list;
}

export class AttachmentTray {
  /**
   * @param {object} opts
   * @param {HTMLFormElement} opts.form       the composer (a drop target)
   * @param {HTMLTextAreaElement} opts.input  the composer's text (a paste target)
   * @param {HTMLButtonElement} opts.button   "Attach"
   * @param {HTMLInputElement} opts.fileInput the hidden <input type=file>
   * @param {HTMLUListElement} opts.list      where the chips go
   * @param {(message: string) => void} opts.onError
   */
  constructor({ form, input, button, fileInput, list, onError }) {
    Object.assign(this, { form, input, button, fileInput, list, onError });
    this.items = []; // {id|null, name, size, kind, chip, file, uploading}
    button.addEventListener("click", () => fileInput.click());
    fileInput.addEventListener("change", () => {
      this.addFiles(fileInput.files);
      fileInput.value = "";
    });
    input.addEventListener("paste", (e) => {
      const files = e.clipboardData ? [...e.clipboardData.files] : [];
      if (files.length) {
        e.preventDefault();
        this.addFiles(files);
      }
    });
    form.addEventListener("dragover", (e) => {
      if (![...(e.dataTransfer?.types || [])].includes("Files")) return;
      e.preventDefault();
      form.classList.add("dropping");
    });
    form.addEventListener("dragleave", () => form.classList.remove("dropping"));
    form.addEventListener("drop", (e) => {
      form.classList.remove("dropping");
      const files = e.dataTransfer ? [...e.dataTransfer.files] : [];
      if (!files.length) return;
      e.preventDefault();
      this.addFiles(files);
    });
  }

  get uploading() {
    return this.items.some((item) => item.uploading);
  }

  /** The uploaded files' ids, in the order they were added. */
  ids() {
    return this.items.filter((item) => item.id).map((item) => item.id);
  }

  /** What the sent message's bubble shows until the snapshot has it. */
  summaries() {
    return this.items.filter((item) => item.id).map(({ chip, file, uploading, ...rest }) => rest);
  }

  addFiles(files) {
    for (const file of files) this.upload(file);
  }

  async upload(file) {
    const item = { id: null, name: file.name || _("pasted file"), size: file.size, kind: "", uploading: true, file };
    item.chip = this.chip(item);
    this.items.push(item);
    this.list.hidden = false;
    const body = new FormData();
    body.append("file", file, item.name);
    let answer = {};
    let ok = false;
    try {
      const response = await fetch("/attachments/", {
        method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() }, body,
      });
      ok = response.ok;
      try {
        answer = await response.json();
      } catch {
        answer = { error: format(_("The upload failed (HTTP %(status)s)."), { status: response.status }) };
      }
    } catch {
      answer = { error: format(_("%(name)s could not be uploaded: the connection failed. Try again."), { name: item.name }) };
    }
    if (!this.items.includes(item)) return; // removed while it uploaded
    if (!ok) {
      this.drop(item);
      this.onError(answer.error || format(_("%(name)s could not be uploaded."), { name: item.name }));
      return;
    }
    Object.assign(item, answer, { uploading: false });
    const fresh = this.chip(item);
    item.chip.replaceWith(fresh);
    item.chip = fresh;
  }

  chip(item) {
    const li = el("li", "attachment-chip");
    li.classList.toggle("uploading", item.uploading);
    if (item.file && (item.kind === "image" || (item.uploading && item.file.type.startsWith("image/")))) {
      const img = el("img", "chip-thumb");
      img.alt = "";
      img.src = item.thumb || (item.thumb = URL.createObjectURL(item.file));
      li.append(img);
    } else {
      li.append(icon("file", "icon chip-icon"));
    }
    const text = el("span", "chip-text");
    text.append(el("span", "chip-name", item.name), el("span", "chip-size", item.uploading ? _("uploading…") : humanSize(item.size)));
    const cap = capText(item);
    if (cap) text.append(el("span", "chip-cap", cap));
    li.append(text);
    const remove = el("button", "chip-remove", "✕");
    remove.type = "button";
    remove.setAttribute("aria-label", format(_("Remove %(name)s"), { name: item.name }));
    remove.addEventListener("click", () => this.remove(item));
    li.append(remove);
    if (item.id) li.dataset.attachmentId = item.id;
    this.list.append(li);
    return li;
  }

  remove(item) {
    this.drop(item);
    if (item.id) {
      fetch(`/attachments/${encodeURIComponent(item.id)}/remove`, {
        method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() },
      }).catch(() => {});
    }
    this.input.focus();
  }

  drop(item) {
    this.items = this.items.filter((other) => other !== item);
    item.chip.remove();
    if (item.thumb) URL.revokeObjectURL(item.thumb);
    this.list.hidden = this.items.length === 0;
  }

  /** After a send: the chips go (the files are the message's now); `taken()` gives them back on a refusal. */
  take() {
    const taken = this.items;
    this.items = [];
    this.list.replaceChildren();
    this.list.hidden = true;
    return taken;
  }

  giveBack(items) {
    for (const item of items) {
      item.chip = this.chip(item);
      this.items.push(item);
    }
    this.list.hidden = this.items.length === 0;
  }
}
