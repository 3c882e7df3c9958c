// The attachment viewer (docs/ui.md, Attachments): a click on a sent image or file opens it in an in-page dialog
// (the full image, or the file's name, size and what the model reads) with a link to download it; Escape or ✕
// closes it and the focus goes back to the thumbnail or chip. A click with a modifier key (or the middle button)
// still opens the file's own address, as a link does.

import { el } from "./dom.js";
import { _ } from "./i18n.js";
import { iconButton } from "./icons.js";

export class AttachmentViewer {
  /** @param {HTMLElement|null} messages  #messages, where sent messages' attachment lists are */
  constructor(messages) {
    if (!messages) return;
    messages.addEventListener("click", (e) => {
      const link = e.target.closest(".attachment-link");
      if (!link || !messages.contains(link)) return;
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      this.open(link);
    });
  }

  open(link) {
    const item = link.closest(".attachment");
    const image = link.querySelector("img");
    const name = link.querySelector(".attachment-name")?.textContent || image?.alt || "";
    const dialog = el("dialog", "app-dialog attachment-viewer");
    dialog.setAttribute("aria-labelledby", "attachment-viewer-title");
    const head = el("div", "attachment-viewer-head");
    const title = el("h2", "attachment-viewer-title", name);
    title.id = "attachment-viewer-title";
    const close = iconButton("close", _("Close"), "button subtle small attachment-viewer-close", () => dialog.close());
    head.append(title, close);
    dialog.append(head);
    if (image) {
      const full = el("img", "attachment-viewer-image");
      full.src = link.href;
      full.alt = name;
      dialog.append(full);
    } else {
      dialog.append(el("p", "attachment-viewer-note", _("This file is not shown here: download it to open it.")));
    }
    const facts = [item?.querySelector(".attachment-size")?.textContent, item?.querySelector(".attachment-cap")?.textContent];
    const about = facts.filter(Boolean).join(" · ");
    if (about) dialog.append(el("p", "attachment-viewer-about", about));
    const download = el("a", "button attachment-viewer-download", _("Download"));
    download.href = link.href;
    download.setAttribute("download", name);
    const row = el("div", "app-dialog-buttons");
    row.append(download);
    dialog.append(row);
    // Escape closes a modal <dialog> by itself; either way the focus goes back to what opened it.
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (link.isConnected) link.focus();
    });
    // A click on the backdrop (outside the dialog's box) closes it too.
    dialog.addEventListener("click", (e) => {
      if (e.target !== dialog) return;
      const box = dialog.getBoundingClientRect();
      const inside = e.clientX >= box.left && e.clientX <= box.right && e.clientY >= box.top && e.clientY <= box.bottom;
      if (!inside) dialog.close();
    });
    document.body.append(dialog);
    dialog.showModal();
    close.focus();
  }
}
