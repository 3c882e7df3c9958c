// The app's service worker (served at /notifications-sw.js, scope "/"): shows a Web Push notification and opens its
// link on a click. The payload holds names and a link only (docs/background-notifications.md); the link is the
// app's own address, which asks for a sign-in when the browser has no session.
self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = {};
  }
  const title = typeof data.title === "string" ? data.title : "agentweb";
  const path = typeof data.path === "string" && data.path.startsWith("/") ? data.path : "/";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: typeof data.body === "string" ? data.body.slice(0, 400) : "",
      tag: "agentweb",
      renotify: true,
      data: { path },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.path || "/", self.location.origin).href;
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
      for (const client of windows) {
        if (client.url === url && "focus" in client) return client.focus();
      }
      return self.clients.openWindow(url);
    }),
  );
});
