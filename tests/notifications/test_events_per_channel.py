"""Each channel tells the events its person ticked for it on the settings page (a table of the four events by
channel): a call waiting, a tool asking for input, a run failed, a scheduled or triggered run finished. What is not
ticked for a channel does not go by it; an event no channel tells is not recorded at all."""

import json
import uuid

import pytest
from django.test import Client

from chat.notify import APPROVAL, FAILED, RunEvent
from hooks.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from notifications.models import KINDS, Event, Preference
from tests.notifications.receivers import PostReceiver, SMTPServer

pytestmark = pytest.mark.django_db(transaction=True)

SAVE = "/settings/notifications/"
SECRET = "a-webhook-secret-of-the-owner"


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def ticked(page: str, channel: str) -> set[str]:
    """The events whose box is ticked for `channel` on the settings page."""
    found = set()
    for kind in KINDS:
        start = page.index(f'id="id_{channel}_events_{kind}"')
        tag = page[page.rindex("<input", 0, start) : page.index(">", start)]
        if " checked" in tag:
            found.add(kind)
    return found


def test_every_event_is_ticked_until_the_person_chooses(owner):
    page = login(owner).get("/settings/").content.decode()
    assert 'id="notification-events"' in page
    assert all(ticked(page, channel) == set(KINDS) for channel in ("push", "email", "webhook"))


def test_a_person_chooses_the_events_of_each_channel_and_the_page_shows_them(owner):
    client = login(owner)
    answer = client.post(
        SAVE,
        {
            "email": "on",
            "email_address": "owner@example.com",
            "events_shown": "1",
            "email_events": ["failed", "finished"],
            "push_events": ["approval", "input"],
        },
    )
    assert answer.status_code == 302
    preference = Preference.objects.get(user=owner)
    assert preference.kinds_of("email") == {"failed", "finished"}
    assert preference.kinds_of("push") == {"approval", "input"} and preference.kinds_of("webhook") == set()
    assert preference.channels_for(APPROVAL) == [] and preference.channels_for(FAILED) == ["email"]
    page = client.get("/settings/").content.decode()
    assert ticked(page, "email") == {"failed", "finished"} and ticked(page, "push") == {"approval", "input"}
    assert ticked(page, "webhook") == set()


def test_a_channel_turned_on_with_no_event_is_refused_and_nothing_is_saved(owner):
    answer = login(owner).post(
        SAVE, {"email": "on", "email_address": "owner@example.com", "events_shown": "1", "push_events": ["failed"]}
    )
    assert answer.status_code == 400 and "Tick an event for email, or turn email off." in answer.content.decode()
    assert not Preference.objects.exists()


def test_an_unknown_event_is_refused(owner):
    answer = login(owner).post(
        SAVE, {"email": "on", "email_address": "o@example.com", "events_shown": "1", "email_events": ["everything"]}
    )
    assert answer.status_code == 400 and not Preference.objects.exists()


def test_a_post_without_the_table_keeps_the_choices(owner):
    Preference.objects.create(user=owner, email=True, events={"email": ["failed"]})
    login(owner).post(SAVE, {"email": "on", "email_address": "owner@example.com", "webhook_url": ""})
    assert Preference.objects.get(user=owner).kinds_of("email") == {"failed"}


def event(thread, kind) -> RunEvent:
    return RunEvent(kind, f"{kind}:{uuid.uuid4()}", thread.pk, 7, "send_email" if kind == APPROVAL else "")


def test_each_channel_sends_only_the_events_ticked_for_it(thread, dispatcher, owner, settings):
    settings.AGENTWEB_NOTIFY_ALLOWED_HOSTS = ["127.0.0.1"]
    owner.email = "owner@example.com"
    owner.save()
    with SMTPServer() as smtp, PostReceiver(status=204) as receiver:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", smtp.port
        Preference.objects.create(
            user=owner,
            email=True,
            webhook=True,
            webhook_url=receiver.url("/hook"),
            webhook_secret=SECRET,
            events={"email": ["failed"], "webhook": ["approval", "failed"]},
        )
        dispatcher.submit(event(thread, APPROVAL))
        dispatcher.submit(event(thread, FAILED))
        assert dispatcher.wait_idle()

    [email] = smtp.mailbox.messages  # email: the failed run only
    assert email["Subject"] == "[agentweb] A run failed" and "send_email" not in email.get_content()
    [delivery] = receiver.received  # the webhook: both, in one notification
    verify(SECRET, delivery.headers[TIMESTAMP_HEADER], delivery.headers[SIGNATURE_HEADER], delivery.body)
    assert sorted(e["kind"] for e in json.loads(delivery.body)["events"]) == ["approval", "failed"]


def test_an_event_no_channel_tells_is_not_recorded_nor_sent(thread, dispatcher, owner, settings):
    owner.email = "owner@example.com"
    owner.save()
    with SMTPServer() as smtp:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", smtp.port
        Preference.objects.create(user=owner, email=True, events={"email": ["failed"]})
        dispatcher.submit(event(thread, APPROVAL))
        assert dispatcher.wait_idle()
    assert smtp.mailbox.messages == [] and not Event.objects.exists()
