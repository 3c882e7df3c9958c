"""The three ways a person is told (chosen on their settings page): Web Push to each of their browsers, email to
their account's address, and a signed POST to their webhook. Each sends one composed notification; a channel that
fails is logged (without the payload or a secret) and the others still go.

Push endpoints and webhook URLs are the person's to give: both are reached through the SSRF guard (tools/net.py),
with no redirect followed, a deadline, and the answer read to a small cap."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.core.mail import send_mail
from py_vapid import Vapid
from pywebpush import WebPusher

from hooks.signing import DELIVERY_HEADER, signed_headers
from tools.net import guarded_request

from . import vapid
from .message import Notification

log = logging.getLogger("agentweb.notify")

#: The whole delivery to one endpoint, and the most of its answer read.
DEADLINE_SECONDS = 15.0
MAX_ANSWER_BYTES = 16 * 1024
#: How long a push service keeps a push for a browser that is offline.
PUSH_TTL_SECONDS = 24 * 3600
#: What a failed connection raises (refused, reset, closed without an answer, timed out): a webhook delivery that
#: met one is tried again. The SSRF guard's refusal (BlockedURL) is not one: it would be refused again.
RETRYABLE = (httpx.TransportError, TimeoutError, ConnectionError)
#: Statuses that mean the subscription is gone (the browser unsubscribed): it is forgotten.
GONE = {404, 410}


def send_email(user, notification: Notification) -> None:
    if not user.email:
        log.info("notification by email skipped: person %s has no address", user.pk)
        return
    send_mail(
        f"[agentweb] {notification.subject}",
        notification.body,
        None,  # DEFAULT_FROM_EMAIL
        [user.email],
        fail_silently=False,
    )


def send_webhook(url: str, secret: str, notification: Notification, *, delivery: str | None = None) -> int:
    """POST the payload, signed like the triggers' deliveries (hooks/signing.py); the answer's status. `delivery`:
    the X-Agentweb-Delivery id, the same on every attempt of one notification. Signed again at each attempt, so
    that a retry's timestamp is within the receiver's window."""
    body = json.dumps(notification.payload(settings.AGENTWEB_PUBLIC_URL)).encode()
    headers = {"Content-Type": "application/json", **signed_headers(secret, body)}
    if delivery:
        headers[DELIVERY_HEADER] = delivery
    return _post(url, body, headers)


def send_push(subscription, notification: Notification) -> int:
    """Encrypt the payload to the subscription's keys (aes128gcm, RFC 8291) and post it with a VAPID signature."""
    info = {"endpoint": subscription.endpoint, "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth}}
    data = json.dumps(notification.payload(settings.AGENTWEB_PUBLIC_URL)).encode()
    body = WebPusher(info).encode(data, "aes128gcm")["body"]
    parts = urlsplit(subscription.endpoint)
    claims = {
        "sub": settings.AGENTWEB_VAPID_SUBJECT,
        "aud": f"{parts.scheme}://{parts.netloc}",
        "exp": int(time.time()) + 12 * 3600,
    }
    headers = {
        **Vapid.from_pem(vapid.private_pem()).sign(claims),
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
        "TTL": str(PUSH_TTL_SECONDS),
        "Urgency": "high",
    }
    return _post(subscription.endpoint, body, headers)


def _post(url: str, body: bytes, headers: dict[str, str]) -> int:
    async def post() -> int:
        async with asyncio.timeout(DEADLINE_SECONDS):
            answer = await guarded_request(
                "POST",
                url,
                headers=headers,
                content=body,
                allowed_hosts=set(settings.AGENTWEB_NOTIFY_ALLOWED_HOSTS),
                max_redirects=0,
                max_bytes=MAX_ANSWER_BYTES,
                timeout=DEADLINE_SECONDS,
            )
        return answer.status_code

    return asyncio.run(post())  # on the notifier's own thread: no event loop of the app's is used
