import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from audit.models import Event

# The chat's websocket client and its fixtures (a real socket through the real session middleware).
from tests.chat.conftest import calculator_needs_approval, close_the_shared_http_client, connect  # noqa: F401


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", password="root-password-1")


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user("staffer", password="staff-password-1", is_staff=True)


@pytest.fixture
def as_superuser(superuser):
    client = Client()
    client.force_login(superuser)
    return client


@pytest.fixture
def as_owner(owner):
    client = Client()
    client.force_login(owner)
    return client


def events(action: str | None = None) -> list[Event]:
    found = Event.objects.order_by("id")
    return list(found.filter(action=action) if action else found)


def everything_recorded() -> str:
    """Every column of every event, as one text: what must never hold a secret."""
    return json.dumps(list(Event.objects.values()), default=str)
