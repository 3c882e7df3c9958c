"""An outgoing webhook that answers 5xx, or closes the connection without answering, is tried again with backoff, a
bounded number of times, each attempt signed afresh and carrying the same delivery id; a 4xx is not tried again.
The receiver is a real local HTTP server (tests/notifications/receivers.py) that checks each signature."""

import json
import time
import uuid

import pytest

from chat.notify import APPROVAL, RunEvent
from hooks.signing import DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from notifications.dispatch import Dispatcher, backoff
from notifications.models import Preference
from tests.notifications.receivers import DROP, PostReceiver

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "a-webhook-secret-of-the-owner"


def approval(thread) -> RunEvent:
    return RunEvent(APPROVAL, f"approval:{uuid.uuid4()}", thread.pk, 7, "send_email")


@pytest.fixture
def retrying(settings):
    settings.AGENTWEB_NOTIFY_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.AGENTWEB_NOTIFY_WEBHOOK_ATTEMPTS = 3
    settings.AGENTWEB_NOTIFY_WEBHOOK_BACKOFF = 0.3  # 0.3 s, then 0.6 s


def told(owner, thread, receiver, dispatcher) -> list:
    Preference.objects.create(user=owner, webhook=True, webhook_url=receiver.url("/hook"), webhook_secret=SECRET)
    dispatcher.submit(approval(thread))
    assert dispatcher.wait_idle(timeout=20)
    return receiver.received


def test_a_5xx_and_a_dropped_connection_are_tried_again_until_the_receiver_takes_it(
    thread, dispatcher, owner, retrying
):
    with PostReceiver(status=204, answers=[503, DROP]) as receiver:
        attempts = told(owner, thread, receiver, dispatcher)
    assert len(attempts) == 3  # 503, closed without an answer, then 204: nothing after it
    for attempt in attempts:  # each signed, so the receiver can check every one
        verify(SECRET, attempt.headers[TIMESTAMP_HEADER], attempt.headers[SIGNATURE_HEADER], attempt.body)
    assert len({a.headers[DELIVERY_HEADER] for a in attempts}) == 1  # one delivery: the receiver can drop repeats
    assert len({a.body for a in attempts}) == 1
    assert json.loads(attempts[0].body)["title"] == "send_email waits for your approval"


def test_the_attempts_are_bounded(thread, dispatcher, owner, retrying):
    started = time.monotonic()
    with PostReceiver(status=500) as receiver:
        attempts = told(owner, thread, receiver, dispatcher)
        time.sleep(1.0)  # a fourth attempt would have come by now (the next wait would be 1.2 s at most)
    assert len(attempts) == 3
    assert time.monotonic() - started >= 0.3 + 0.6  # it waited between attempts


def test_a_4xx_is_not_tried_again(thread, dispatcher, owner, retrying):
    with PostReceiver(status=400) as receiver:
        attempts = told(owner, thread, receiver, dispatcher)
        time.sleep(0.6)
    assert len(attempts) == 1


def test_a_refused_address_is_not_tried_again(thread, dispatcher, owner, retrying, settings):
    settings.AGENTWEB_NOTIFY_ALLOWED_HOSTS = []  # the SSRF guard refuses 127.0.0.1: it would refuse again
    with PostReceiver(status=204) as receiver:
        attempts = told(owner, thread, receiver, dispatcher)
    assert attempts == []


def test_backoff_doubles_and_is_capped(settings):
    settings.AGENTWEB_NOTIFY_WEBHOOK_BACKOFF = 2
    assert [backoff(n) for n in (1, 2, 3)] == [2, 4, 8]
    assert backoff(30) == 300


def test_a_dispatcher_waits_for_its_retries_before_it_is_idle(thread, owner, retrying, settings):
    settings.AGENTWEB_NOTIFY_WINDOW = 0
    with PostReceiver(status=204, answers=[502]) as receiver:
        dispatcher = Dispatcher()
        attempts = told(owner, thread, receiver, dispatcher)
    assert len(attempts) == 2
