// The settings page's "Turn on push in this browser": registers the service worker, subscribes with the app's VAPID
// public key and hands the subscription to the server (templates/notifications/settings_section.html).
import { _, format } from "../chat/i18n.js";

const section = document.getElementById("notifications");
const button = document.getElementById("push-subscribe");
const status = document.getElementById("push-status");

function csrfToken() {
  return section.querySelector("input[name=csrfmiddlewaretoken]")?.value || "";
}

function keyBytes(base64url) {
  const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (base64url.length % 4)) % 4));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

async function subscribe() {
  if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
    status.textContent = _("This browser cannot receive push notifications.");
    return;
  }
  if ((await Notification.requestPermission()) !== "granted") {
    status.textContent = _("Notifications are blocked for this site in the browser's settings.");
    return;
  }
  const registration = await navigator.serviceWorker.register(section.dataset.serviceWorker, { scope: "/" });
  await navigator.serviceWorker.ready;
  const subscription = await registration.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: keyBytes(section.dataset.vapidKey),
  });
  const response = await fetch(section.dataset.subscribeUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify(subscription.toJSON()),
  });
  status.textContent = response.ok ? _("This browser will be notified.") : _("The server refused the subscription.");
  if (response.ok) document.getElementById("id_push").checked = true;
}

button?.addEventListener("click", () => {
  subscribe().catch((error) => {
    status.textContent = format(_("Push could not be turned on: %(reason)s"), { reason: error.message });
  });
});
