"""Web Push in real Chromium, against the real app (Daphne) and a scripted model server.

What is real: the settings page's "Turn on push in this browser" (its script, the permission, the service worker
registered from /notifications-sw.js with scope "/", the POST of the subscription with the CSRF token), the server
keeping it, a run that waits for approval, the notifier encrypting the push to the subscription's keys (aes128gcm)
and signing it with the app's VAPID key, a local push service that receives it and decrypts it with the browser's
private key, and the service worker showing the decrypted payload as a notification.

What is not: Chromium's own push service. `PushManager.subscribe` asks Google's (FCM), which this offline machine
cannot reach, so the init script below stands in for that one call: it records the applicationServerKey the page
passes and answers a subscription whose endpoint is the local push service and whose keys are a real P-256 pair and
auth secret made by the test (tests/notifications/test_dispatch.py Browser). The push service's relay to the browser
is replaced by DevTools' ServiceWorker.deliverPushMessage, carrying the payload the local push service decrypted.
"""

import base64
import json

import pytest

from tests.e2e import test_browser_approvals as approvals
from tests.e2e.test_browser_approvals import ASK, DONE, INIT_SCRIPT, PASSWORD, USER, WAITING, ask
from tests.notifications.receivers import PostReceiver
from tests.notifications.test_dispatch import Browser, b64url
from tests.support.browser import connected, sign_in
from tests.support.processes import manage

migrated_db = approvals.migrated_db
start_app = approvals.start_app

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)

# The stand-in for the browser's push service (see the module's docstring); everything else the page does is its own.
PUSH_STAND_IN = """
(() => {
  const made = %(subscription)s;
  window.__serverKeys = [];
  PushManager.prototype.subscribe = async function (options) {
    window.__serverKeys.push(Array.from(new Uint8Array(options.applicationServerKey)));
    return { endpoint: made.endpoint, expirationTime: null, toJSON: () => made };
  };
})();
"""
SUBSCRIPTIONS = (
    "import json; from notifications.models import PushSubscription, Preference;"
    " print(json.dumps({'subscriptions': [[s.user.username, s.endpoint, s.p256dh, s.auth]"
    " for s in PushSubscription.objects.all()],"
    " 'push': [p.user.username for p in Preference.objects.filter(push=True)]}))"
)


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_push_is_turned_on_from_the_settings_page_and_a_waiting_call_is_pushed_and_shown(start_app, browser):
    keys = Browser()
    with PostReceiver(status=201) as push_service:
        endpoint = push_service.url("/push/this-browser")
        subscription = {"endpoint": endpoint, "keys": {"p256dh": keys.p256dh, "auth": b64url(keys.auth)}}
        app = start_app(
            [ASK, DONE],
            DJANGO_DEBUG="1",  # the subscription's endpoint is http:// (the local push service)
            AGENTWEB_NOTIFY_WINDOW="0",
            AGENTWEB_NOTIFY_ALLOWED_HOSTS="127.0.0.1",
        )
        context = browser.new_context(viewport={"width": 900, "height": 760})
        context.grant_permissions(["notifications"], origin=app.url)
        context.add_init_script(INIT_SCRIPT)
        context.add_init_script(PUSH_STAND_IN % {"subscription": json.dumps(subscription)})
        try:
            page = context.new_page()
            sign_in(page, app.url, USER, PASSWORD)
            page.goto(f"{app.url}/settings/#notifications")
            vapid_key = page.locator("#notifications").get_attribute("data-vapid-key")
            assert len(unb64url(vapid_key)) == 65 and unb64url(vapid_key)[0] == 4  # a P-256 point, uncompressed

            page.locator("#push-subscribe").click()
            expect(page.locator("#push-status")).to_have_text("This browser will be notified.")
            expect(page.locator("#id_push")).to_be_checked()

            # The page subscribed with the server's VAPID key, and registered the app's worker for the whole site.
            assert [bytes(k) for k in page.evaluate("window.__serverKeys")] == [unb64url(vapid_key)]
            worker = page.evaluate(
                """async () => {
                  const r = await navigator.serviceWorker.getRegistration("/");
                  await navigator.serviceWorker.ready;
                  return r && { scope: r.scope, script: r.active && r.active.scriptURL };
                }"""
            )
            assert worker == {"scope": f"{app.url}/", "script": f"{app.url}/notifications-sw.js"}

            # The server kept the subscription for this person, and push is on for them.
            kept = json.loads(manage(app.env, "shell", "-c", SUBSCRIPTIONS).strip().splitlines()[-1])
            assert kept == {"subscriptions": [[USER, endpoint, keys.p256dh, b64url(keys.auth)]], "push": [USER]}
            page.reload()
            expect(page.locator("#push-status")).to_have_text("1 browser subscribed.")

            # A run waits for approval: the notifier pushes, encrypted to this browser's keys.
            chat = context.new_page()
            chat.goto(f"{app.url}/")
            connected(chat)
            ask(chat, "mail the report")  # the chat's title; the model's call carries the address
            expect(chat.locator(WAITING).locator(".decide-approve")).to_be_visible()
            assert push_service.arrived.wait(15), "nothing was pushed"
            [push] = push_service.received
            assert push.path == "/push/this-browser" and push.headers["Content-Encoding"] == "aes128gcm"
            assert push.headers["Authorization"].split("k=")[1].strip() == vapid_key
            payload = keys.decrypt(push.body)
            assert payload["title"] == "send_email waits for your approval" and payload["path"] == "/inbox"
            assert "a@example.com" not in json.dumps(payload)  # no argument values
            assert payload["events"][0]["thread"]["title"] == "mail the report"

            # The service worker shows what the push service would relay.
            cdp = context.new_cdp_session(page)
            registrations = []
            cdp.on(
                "ServiceWorker.workerRegistrationUpdated", lambda event: registrations.extend(event["registrations"])
            )
            cdp.send("ServiceWorker.enable")
            for _ in range(50):  # the registrations arrive as events
                if any(r["scopeURL"] == f"{app.url}/" for r in registrations):
                    break
                page.wait_for_timeout(100)
            [registration] = [r for r in registrations if r["scopeURL"] == f"{app.url}/" and not r["isDeleted"]]
            cdp.send(
                "ServiceWorker.deliverPushMessage",
                {"origin": app.url, "registrationId": registration["registrationId"], "data": json.dumps(payload)},
            )
            shown = """async () => {
              const r = await navigator.serviceWorker.ready;
              return (await r.getNotifications()).map((n) => ({ title: n.title, body: n.body, data: n.data }));
            }"""
            deadline = 50
            while not page.evaluate(shown) and deadline:
                page.wait_for_timeout(100)
                deadline -= 1
            [notification] = page.evaluate(shown)
            assert notification["title"] == "send_email waits for your approval"
            assert notification["data"] == {"path": "/inbox"} and "send_email" in notification["body"]
        finally:
            context.close()
