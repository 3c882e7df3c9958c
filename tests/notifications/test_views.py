"""The settings page's notifications: a person chooses their channels, their email address and their webhook; the
webhook's secret is never shown back; a browser's push subscription is kept for its person only; the service worker
is served from the site's root. Another person sees and changes none of it."""

import json

import pytest
from django.db import connection
from django.test import Client

from notifications.models import Preference, PushSubscription

pytestmark = pytest.mark.django_db

SETTINGS = "/settings/"
SAVE = "/settings/notifications/"
SUBSCRIBE = "/settings/notifications/push/"
UNSUBSCRIBE = "/settings/notifications/push/remove/"
SECRET = "the-owners-webhook-secret-1234"
ENDPOINT = "https://push.example.net/send/owner-browser"


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def choose(client, **fields):
    data = {"email_address": "", "webhook_url": "", "webhook_secret": ""}
    data.update({k: v for k, v in fields.items() if v is not False})
    return client.post(SAVE, data)


def subscription(endpoint=ENDPOINT) -> str:
    return json.dumps({"endpoint": endpoint, "keys": {"p256dh": "BPublicKeyOfTheBrowser", "auth": "AuthSecret16"}})


def test_the_owner_chooses_email_and_a_webhook_and_the_secret_is_never_shown_back(owner):
    client = login(owner)
    response = choose(
        client,
        email="on",
        email_address="owner@example.com",
        webhook="on",
        webhook_url="https://hooks.example.com/agentweb",
        webhook_secret=SECRET,
    )
    assert response.status_code == 302 and response["Location"].endswith("#notifications")
    owner.refresh_from_db()
    preference = Preference.objects.get(user=owner)
    assert owner.email == "owner@example.com"
    assert preference.channels() == ["email", "webhook"] and preference.webhook_secret == SECRET
    with connection.cursor() as cursor:  # encrypted at rest
        cursor.execute("SELECT webhook_secret FROM notifications_preference")
        assert SECRET not in cursor.fetchone()[0]

    page = client.get(SETTINGS).content.decode()
    assert 'id="notifications"' in page and "owner@example.com" in page
    assert "https://hooks.example.com/agentweb" in page and "A secret is set" in page
    assert SECRET not in page


def test_an_empty_secret_keeps_the_one_set(owner):
    client = login(owner)
    choose(client, webhook="on", webhook_url="https://hooks.example.com/a", webhook_secret=SECRET)
    choose(client, webhook="on", webhook_url="https://hooks.example.com/b")
    preference = Preference.objects.get(user=owner)
    assert preference.webhook_url == "https://hooks.example.com/b" and preference.webhook_secret == SECRET


@pytest.mark.parametrize(
    "fields, said",
    [
        ({"email": "on"}, "Email needs your address."),
        ({"webhook": "on", "webhook_secret": SECRET}, "The webhook needs its URL."),
        ({"webhook": "on", "webhook_url": "https://hooks.example.com/a"}, "The webhook needs a secret to sign with."),
        ({"webhook_url": "https://hooks.example.com/a", "webhook_secret": "short"}, "at least 16 characters"),
    ],
)
def test_an_incomplete_choice_is_refused_and_nothing_is_saved(owner, fields, said):
    response = choose(login(owner), **fields)
    assert response.status_code == 400 and said in response.content.decode()
    assert not Preference.objects.exists()


def test_a_browser_subscribes_and_unsubscribes(owner):
    client = login(owner)
    response = client.post(SUBSCRIBE, subscription(), content_type="application/json")
    assert response.status_code == 201
    kept = PushSubscription.objects.get()
    assert (kept.user, kept.endpoint, kept.auth) == (owner, ENDPOINT, "AuthSecret16")
    assert Preference.objects.get(user=owner).push
    assert "1 browser subscribed." in client.get(SETTINGS).content.decode()

    response = client.post(UNSUBSCRIBE, json.dumps({"endpoint": ENDPOINT}), content_type="application/json")
    assert response.json() == {"removed": True} and not PushSubscription.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        subscription("http://push.example.net/plain"),
        subscription("javascript:alert(1)"),
        json.dumps({"endpoint": ENDPOINT}),
        json.dumps({"endpoint": ENDPOINT, "keys": {"p256dh": "x" * 500, "auth": "a"}}),
        "not json",
        json.dumps({"endpoint": ENDPOINT + "x" * 5000, "keys": {"p256dh": "k", "auth": "a"}}),
    ],
)
def test_a_malformed_subscription_is_refused(owner, body):
    response = login(owner).post(SUBSCRIBE, body, content_type="application/json")
    assert response.status_code == 400 and not PushSubscription.objects.exists()


def test_a_stranger_neither_sees_nor_changes_anothers_notifications(owner, stranger):
    owner.email = "owner@example.com"
    owner.save()
    Preference.objects.create(
        user=owner, email=True, webhook=True, webhook_url="https://hooks.example.com/owner", webhook_secret=SECRET
    )
    PushSubscription.objects.create(user=owner, endpoint=ENDPOINT, p256dh="k", auth="a")
    client = login(stranger)

    page = client.get(SETTINGS).content.decode()
    assert "owner@example.com" not in page and "hooks.example.com/owner" not in page and SECRET not in page
    assert "A secret is set" not in page and "browser subscribed" not in page

    choose(client, email="on", email_address="stranger@example.com")
    client.post(UNSUBSCRIBE, json.dumps({"endpoint": ENDPOINT}), content_type="application/json")
    owners = Preference.objects.get(user=owner)
    assert owners.channels() == ["email", "webhook"] and owners.webhook_url == "https://hooks.example.com/owner"
    assert PushSubscription.objects.get().user == owner
    owner.refresh_from_db()
    assert owner.email == "owner@example.com"


def test_without_signing_in_nothing_is_saved(owner):
    anonymous = Client()
    assert choose(anonymous, email="on", email_address="x@example.com").status_code == 302
    assert anonymous.post(SUBSCRIBE, subscription(), content_type="application/json").status_code == 302
    assert not Preference.objects.exists() and not PushSubscription.objects.exists()


def test_the_service_worker_is_served_from_the_root_so_that_it_covers_the_app(client):
    response = client.get("/notifications-sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript") and response["Service-Worker-Allowed"] == "/"
    assert b'addEventListener("push"' in response.content


def test_without_a_vapid_key_the_page_works_and_says_push_is_unavailable(owner, settings, tmp_path):
    settings.AGENTWEB_VAPID_KEY_FILE = tmp_path / "no-such-folder" / "vapid_key"
    page = login(owner).get(SETTINGS)
    assert page.status_code == 200
    assert "Push is not available" in page.content.decode() and 'id="push-subscribe"' not in page.content.decode()
