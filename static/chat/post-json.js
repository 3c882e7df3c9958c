// A JSON POST to one of the app's own endpoints, with the CSRF token Django set as a cookie; a refusal becomes an
// Error whose message is for the person.

import { _, format } from "./i18n.js";

/** The CSRF token Django set as a cookie (the chat page asks for one). */
function csrfToken() {
  for (const part of document.cookie.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === "csrftoken") return decodeURIComponent(rest.join("="));
  }
  return "";
}

export async function postJson(url, data) {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify(data || {}),
  });
  let body = {};
  try {
    body = await response.json();
  } catch {
    body = {};
  }
  if (!response.ok) {
    const reason = response.status === 404 ? _("That chat no longer exists.") : body.error || format(_("The server answered %(status)s."), { status: response.status });
    throw new Error(reason);
  }
  return body;
}
