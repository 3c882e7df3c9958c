// A running call of an MCP server each person connects to, waiting for this person to connect their account
// (tool_call.connect_requested): a "Connect" link to the app's page where they sign in or enter their key (in a
// new tab), and Cancel. The call goes on by itself once they have connected; tool_call.input_answered closes it.
// The server's name is the admin's text: textContent only.

import { CardForm } from "./card-form.js";
import { el, button } from "./dom.js";
import { _, format } from "./i18n.js";

export class ConnectPanel extends CardForm {
  /**
   * @param {object} o
   * @param {string} o.request  the request's id
   * @param {string} o.server   the MCP server's name
   * @param {string} o.mode     "oauth" (sign in) or "header" (a key)
   * @param {string} o.url      the app's page where the person connects
   * @param {(payload: {request: string, action: string}) => void} o.onSend
   */
  constructor({ request, server, mode, url, onSend }) {
    super(_("Cancelling…"));
    this.request = String(request);
    this.onSend = onSend;
    this.root = el("div", "connect-request");
    this.root.dataset.request = this.request;
    this.fieldset = el("fieldset", "connect-fieldset");
    const name = typeof server === "string" ? server : "";
    this.fieldset.append(el("legend", "connect-request-label", format(_("%(server)s works with your own account."), { server: name })));
    const how = mode === "header" ? _("enter your key") : _("sign in");
    this.fieldset.append(el("p", "connect-request-message",
      format(_("Connect your account (%(how)s) to let this call go on: it continues by itself once you have."), { how })));
    const actions = el("div", "connect-actions");
    const link = el("a", "button primary connect-open", format(_("Connect %(server)s"), { server: name }));
    // Only the app's own page: a relative address of this origin.
    link.href = typeof url === "string" && url.startsWith("/") && !url.startsWith("//") ? url : "/mcp/connections/";
    link.target = "_blank";
    link.rel = "noopener";
    actions.append(link, button(_("Cancel"), "button subtle connect-cancel", () => this.send({ action: "cancel" })));
    this.fieldset.append(actions);
    this.messageEl = el("p", "input-message");
    this.messageEl.hidden = true;
    this.root.append(this.fieldset, this.messageEl);
  }

  send(payload) {
    super.send({ request: this.request, ...payload });
  }

  focus() {
    this.root.querySelector("a")?.focus({ preventScroll: true });
  }
}

/** What the card says once the request to connect closed ("Connected", "Not connected"…). */
export function connectAnsweredText(action, by) {
  if (action === "accept") return _("Connected");
  return by ? format(_("Not connected (cancelled by %(by)s)"), { by }) : _("Not connected");
}
