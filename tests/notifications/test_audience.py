"""Who is told, kept per process (notifications/audience.py): an event of a person with no channel for it costs the
notifier no database connection, while one of a person with a channel is recorded and sent as before; a channel
turned on, in this process or another sharing Redis, tells the very next event."""

import threading
import uuid

import pytest
from django.db.backends.signals import connection_created

from chat.notify import APPROVAL, FAILED, FINISHED, RunEvent
from notifications.audience import Audience, Generations
from notifications.dispatch import Dispatcher
from notifications.models import Event, Preference
from tests.notifications.test_dispatch import smtp  # noqa: F401 (the fixture)
from tests.support.production import REDIS_URL, forget_redis_prefix, require_servers

pytestmark = pytest.mark.django_db(transaction=True)


def told(thread, kind=APPROVAL, owner=None) -> RunEvent:
    """An event as a run tells it: the thread's owner named."""
    owner_id = (owner or thread.owner).pk
    return RunEvent(kind, f"{kind}:{uuid.uuid4()}", thread.pk, 7, "send_email", owner_id)


class Connections:
    """Database connections opened meanwhile, by any thread (a pool's lending counts as one)."""

    def __init__(self):
        self.opened = 0
        self._lock = threading.Lock()

    def __call__(self, **_):
        with self._lock:
            self.opened += 1

    def __enter__(self):
        connection_created.connect(self, weak=False, dispatch_uid="test-audience")
        return self

    def __exit__(self, *exc):
        connection_created.disconnect(dispatch_uid="test-audience")


def test_it_costs_no_connection_to_drop_the_events_of_a_person_without_channels(thread, dispatcher, stranger):
    Preference.objects.create(user=stranger, email=True)  # somebody has a channel; the thread's owner has none
    dispatcher.submit(told(thread))  # who is told is read once
    assert dispatcher.wait_idle()
    with Connections() as connections:
        for kind in (APPROVAL, FAILED, FINISHED):
            for _ in range(20):
                dispatcher.submit(told(thread, kind))
        assert dispatcher.wait_idle()
    assert connections.opened == 0
    assert Event.objects.count() == 0


def test_a_person_with_a_channel_is_told_as_before(thread, dispatcher, by_email, smtp):  # noqa: F811
    by_email.events = {"email": ["failed"]}
    by_email.save()
    dispatcher.submit(told(thread, APPROVAL))  # not a kind the email tells: not recorded, as without the owner named
    dispatcher.submit(told(thread, FAILED))
    assert dispatcher.wait_idle()
    assert [m["Subject"] for m in smtp.messages] == ["[agentweb] A run failed"]
    assert list(Event.objects.values_list("kind", flat=True)) == [FAILED]


def test_a_channel_turned_on_tells_the_next_event(thread, dispatcher, owner, smtp):  # noqa: F811
    owner.email = "owner@example.com"
    owner.save()
    dispatcher.submit(told(thread))
    assert dispatcher.wait_idle() and Event.objects.count() == 0
    Preference.objects.create(user=owner, email=True)
    dispatcher.submit(told(thread))
    assert dispatcher.wait_idle()
    assert len(smtp.messages) == 1


def test_a_channel_turned_off_tells_no_more(thread, dispatcher, by_email, smtp):  # noqa: F811
    dispatcher.submit(told(thread))
    assert dispatcher.wait_idle() and len(smtp.messages) == 1
    by_email.delete()
    dispatcher.submit(told(thread))
    assert dispatcher.wait_idle()
    assert len(smtp.messages) == 1 and Event.objects.count() == 1


@pytest.fixture
def shared_redis(settings):
    require_servers()
    settings.REDIS_URL = REDIS_URL
    settings.AGENTWEB_REDIS_PREFIX = f"test-audience-{uuid.uuid4().hex[:8]}"
    yield
    forget_redis_prefix(settings.AGENTWEB_REDIS_PREFIX)


def test_a_channel_turned_on_in_another_process_tells_the_next_event(thread, owner, smtp, shared_redis, settings):  # noqa: F811
    owner.email = "owner@example.com"
    owner.save()
    # A process of its own: its count of writes is not the one this process's signals move; only Redis tells it.
    worker = Dispatcher(window=0.3, audience=Audience(Generations()))
    settings.AGENTWEB_PUBLIC_URL = "https://agentweb.example"
    worker.submit(told(thread))
    assert worker.wait_idle() and Event.objects.count() == 0
    Preference.objects.create(user=owner, email=True)  # saved by "the page's" process: this one's signals
    worker.submit(told(thread))
    assert worker.wait_idle()
    assert len(smtp.messages) == 1
