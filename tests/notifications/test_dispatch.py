"""A run's events reach their person once, by the channels they chose, coalesced per window: email through a real
SMTP server, Web Push to a local push service that decrypts the payload with the subscription's own keys, a webhook
whose receiver checks the signature. No notification carries a call's arguments or a token."""

import base64
import json
import os
import uuid

import http_ece
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from chat.notify import APPROVAL, FAILED, FINISHED, INPUT, RunEvent
from hooks.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from notifications import vapid
from notifications.dispatch import Dispatcher
from notifications.models import Event, Preference, PushSubscription
from tests.notifications.conftest import PUBLIC_URL
from tests.notifications.receivers import PostReceiver, SMTPServer

pytestmark = pytest.mark.django_db(transaction=True)

WEBHOOK_SECRET = "a-webhook-secret-of-the-owner"


def approval(thread, tool="send_email", call=None) -> RunEvent:
    return RunEvent(APPROVAL, f"approval:{call or uuid.uuid4()}", thread.pk, 7, tool)


@pytest.fixture
def smtp(settings):
    with SMTPServer() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        yield server.mailbox


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- email -------------------------------------------------------------------------------------------------------


def test_a_call_waiting_is_emailed_with_the_agent_tool_thread_and_a_plain_link(thread, dispatcher, by_email, smtp):
    dispatcher.submit(approval(thread))
    assert dispatcher.wait_idle()

    assert len(smtp.messages) == 1 and smtp.recipients == [["owner@example.com"]]
    message = smtp.messages[0]
    assert message["Subject"] == "[agentweb] send_email waits for your approval"
    body = message.get_content()
    assert "Mailer: send_email waits for approval in “Quarterly report”" in body
    assert f"{PUBLIC_URL}/inbox" in body
    # The link is the app's own address, which asks for a sign-in: nothing in it stands for a session.
    link = next(word for word in body.split() if word.startswith(PUBLIC_URL))
    assert link == f"{PUBLIC_URL}/inbox"


def test_the_same_event_told_twice_by_two_processes_is_sent_once(thread, dispatcher, by_email, smtp):
    other_process = Dispatcher()
    event = approval(thread)
    dispatcher.submit(event)
    other_process.submit(event)
    dispatcher.submit(event)
    assert dispatcher.wait_idle() and other_process.wait_idle()
    assert len(smtp.messages) == 1
    assert Event.objects.filter(key=event.key).count() == 1


def test_fifty_calls_waiting_in_a_burst_make_one_email_that_says_fifty(thread, dispatcher, by_email, smtp):
    for _ in range(50):
        dispatcher.submit(approval(thread))
    assert dispatcher.wait_idle()
    assert len(smtp.messages) == 1
    message = smtp.messages[0]
    assert message["Subject"] == "[agentweb] 50 tool calls wait for your approval"
    assert "… and 40 more." in message.get_content()
    assert Event.objects.filter(sent_at__isnull=True).count() == 0


def test_a_later_event_after_the_window_is_a_notification_of_its_own(thread, dispatcher, by_email, smtp):
    dispatcher.submit(approval(thread))
    assert dispatcher.wait_idle()
    dispatcher.submit(RunEvent(FAILED, "failed:7", thread.pk, 7))
    assert dispatcher.wait_idle()
    assert [m["Subject"] for m in smtp.messages] == [
        "[agentweb] send_email waits for your approval",
        "[agentweb] A run failed",
    ]
    assert f"{PUBLIC_URL}/t/{thread.pk}/" in smtp.messages[1].get_content()


def test_a_finished_scheduled_run_and_an_input_request_are_told(thread, dispatcher, by_email, smtp):
    dispatcher.submit(RunEvent(FINISHED, "finished:9", thread.pk, 9))
    dispatcher.submit(RunEvent(INPUT, "input:abc", thread.pk, 9, "ask_user"))
    assert dispatcher.wait_idle()
    assert len(smtp.messages) == 1
    subject = smtp.messages[0]["Subject"]
    assert "A scheduled or triggered run finished" in subject and "ask_user asks for your input" in subject


def test_nobody_who_chose_no_channel_is_told_or_recorded(thread, dispatcher, smtp, owner):
    owner.email = "owner@example.com"
    owner.save()
    Preference.objects.create(user=owner)  # every channel off
    dispatcher.submit(approval(thread))
    assert dispatcher.wait_idle()
    assert smtp.messages == [] and Event.objects.count() == 0


def test_an_event_of_another_persons_thread_goes_to_that_person_only(thread, dispatcher, smtp, stranger):
    stranger.email = "stranger@example.com"
    stranger.save()
    Preference.objects.create(user=stranger, email=True)
    dispatcher.submit(approval(thread))  # the owner's thread; the owner chose nothing
    assert dispatcher.wait_idle()
    assert smtp.messages == []


# --- Web Push ------------------------------------------------------------------------------------------------------


class Browser:
    """A subscription's keys as a browser makes them: a P-256 pair and a 16-byte auth secret."""

    def __init__(self):
        self.private_key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        self.p256dh = b64url(point)

    def decrypt(self, body: bytes) -> dict:
        return json.loads(
            http_ece.decrypt(body, private_key=self.private_key, auth_secret=self.auth, version="aes128gcm")
        )


def check_vapid(authorization: str, audience: str) -> None:
    """The Authorization header is `vapid t=<JWT>, k=<the app's public key>` and the JWT's ES256 signature holds."""
    scheme, _, rest = authorization.partition(" ")
    fields = dict(part.strip().split("=", 1) for part in rest.split(","))
    assert scheme == "vapid" and fields["k"] == vapid.public_key()
    head, claims, signature = fields["t"].split(".")
    raw = unb64url(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(fields["k"]))
    key.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if it does not hold
    assert json.loads(unb64url(claims))["aud"] == audience


def test_a_push_is_encrypted_to_the_subscription_and_signed_with_the_apps_vapid_key(
    thread, dispatcher, owner, settings
):
    settings.AGENTWEB_NOTIFY_ALLOWED_HOSTS = ["127.0.0.1"]
    browser = Browser()
    Preference.objects.create(user=owner, push=True)
    with PostReceiver(status=201) as push_service:
        PushSubscription.objects.create(
            user=owner, endpoint=push_service.url("/push/abc"), p256dh=browser.p256dh, auth=b64url(browser.auth)
        )
        dispatcher.submit(approval(thread))
        assert dispatcher.wait_idle()

    [push] = push_service.received
    assert push.path == "/push/abc"
    assert push.headers["Content-Encoding"] == "aes128gcm" and int(push.headers["TTL"]) > 0
    check_vapid(push.headers["Authorization"], push_service.url("").rstrip("/"))
    payload = browser.decrypt(push.body)
    assert payload["title"] == "send_email waits for your approval"
    assert payload["path"] == "/inbox" and payload["url"] == f"{PUBLIC_URL}/inbox" and payload["count"] == 1
    assert payload["events"] == [
        {
            "kind": "approval",
            "agent": "Mailer",
            "tool": "send_email",
            "thread": {"id": str(thread.pk), "title": "Quarterly report"},
            "link": f"/t/{thread.pk}/",
        }
    ]


def test_a_subscription_the_push_service_says_is_gone_is_forgotten(thread, dispatcher, owner, settings):
    settings.AGENTWEB_NOTIFY_ALLOWED_HOSTS = ["127.0.0.1"]
    browser = Browser()
    Preference.objects.create(user=owner, push=True)
    with PostReceiver(status=410) as push_service:
        PushSubscription.objects.create(
            user=owner, endpoint=push_service.url("/gone"), p256dh=browser.p256dh, auth=b64url(browser.auth)
        )
        dispatcher.submit(approval(thread))
        assert dispatcher.wait_idle()
    assert len(push_service.received) == 1
    assert not PushSubscription.objects.exists()


# --- webhook -------------------------------------------------------------------------------------------------------


def test_the_webhook_is_signed_so_its_receiver_can_verify_it(thread, dispatcher, owner, settings):
    settings.AGENTWEB_NOTIFY_ALLOWED_HOSTS = ["127.0.0.1"]
    with PostReceiver(status=204) as receiver:
        Preference.objects.create(
            user=owner, webhook=True, webhook_url=receiver.url("/hook"), webhook_secret=WEBHOOK_SECRET
        )
        for _ in range(3):
            dispatcher.submit(approval(thread))
        assert dispatcher.wait_idle()

    [delivery] = receiver.received
    verify(WEBHOOK_SECRET, delivery.headers[TIMESTAMP_HEADER], delivery.headers[SIGNATURE_HEADER], delivery.body)
    payload = json.loads(delivery.body)
    assert payload["count"] == 3 and payload["title"] == "3 tool calls wait for your approval"
    assert {e["tool"] for e in payload["events"]} == {"send_email"}
    assert WEBHOOK_SECRET not in delivery.body.decode()


def test_a_webhook_on_a_private_address_is_refused_by_the_ssrf_guard(thread, dispatcher, owner, settings):
    settings.AGENTWEB_NOTIFY_ALLOWED_HOSTS = []
    with PostReceiver() as receiver:
        Preference.objects.create(
            user=owner, webhook=True, webhook_url=receiver.url("/hook"), webhook_secret=WEBHOOK_SECRET
        )
        dispatcher.submit(approval(thread))
        assert dispatcher.wait_idle()
    assert receiver.received == []
