import pytest

from agents.models import Agent
from chat.models import Thread
from notifications.dispatch import Dispatcher
from notifications.models import Preference

PUBLIC_URL = "https://agentweb.example"


@pytest.fixture
def thread(owner):
    agent = Agent.objects.create(name="Mailer", slug="mailer", owner=owner)
    return Thread.objects.create(owner=owner, title="Quarterly report", agent=agent)


@pytest.fixture
def dispatcher(settings):
    settings.AGENTWEB_PUBLIC_URL = PUBLIC_URL
    settings.AGENTWEB_NOTIFY_WINDOW = 0.3
    return Dispatcher()


@pytest.fixture
def by_email(owner, settings):
    """The owner chose email; Django sends through the test's own SMTP server (see smtp)."""
    owner.email = "owner@example.com"
    owner.save()
    return Preference.objects.create(user=owner, email=True)
