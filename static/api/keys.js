// The new API key's page (templates/api/key_created.html): a Copy button beside the key, shown once. Without
// JavaScript the key is still there to select and copy by hand.

import { _ } from "../chat/i18n.js";

const input = document.getElementById("api-key-value");
const button = document.getElementById("api-key-copy");
const said = document.getElementById("api-key-copied");

if (input && button && said) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(input.value); // only in secure contexts (https, localhost)
    } catch {
      input.select();
      if (!document.execCommand("copy")) {
        said.textContent = _("Select the key and copy it.");
        return;
      }
    }
    said.textContent = _("Copied.");
  });
  input.addEventListener("focus", () => input.select());
  input.focus();
}
