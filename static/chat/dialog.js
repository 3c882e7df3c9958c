// In-page dialogs in place of window.confirm(): a modal <dialog> (the rest of the page is inert while it is open,
// so focus stays inside), closed by Escape or Cancel; focus goes back to where it was.

import { el, button } from "./dom.js";
import { _ } from "./i18n.js";

/**
 * Asks a yes/no question. Resolves true when the person confirms.
 * @param {object} o
 * @param {string} o.title
 * @param {string} o.body
 * @param {string} o.confirm  the confirming button's words ("Delete")
 * @param {boolean} [o.danger]
 */
export function confirmDialog({ title, body, confirm, danger = false }) {
  return new Promise((resolve) => {
    const returnTo = document.activeElement;
    const dialog = el("dialog", "app-dialog");
    dialog.setAttribute("aria-labelledby", "app-dialog-title");
    dialog.setAttribute("aria-describedby", "app-dialog-body");
    const heading = el("h2", "app-dialog-title", title);
    heading.id = "app-dialog-title";
    const text = el("p", "app-dialog-body", body);
    text.id = "app-dialog-body";
    const cancel = button(_("Cancel"), "button subtle app-dialog-cancel", () => dialog.close("cancel"));
    const ok = button(confirm, `button ${danger ? "danger" : "primary"} app-dialog-confirm`, () => dialog.close("confirm"));
    const row = el("div", "app-dialog-buttons");
    row.append(cancel, ok);
    dialog.append(heading, text, row);
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (returnTo && returnTo.isConnected) returnTo.focus();
      resolve(dialog.returnValue === "confirm");
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus(); // the safe choice first
  });
}
