"""The try-it page runs a tool as the admin: with their user and their own key-value store.

This module is also a tool module (AGENTWEB_TOOL_MODULES): `note_down` below is a code tool for these tests.
"""

from typing import Annotated

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tools.base import tool
from tools.context import KeyValueStore, ToolUser
from tools.injection import InjectedStore, InjectedUser
from tools.models import MemoryItem, ToolSetting
from tools.registry import default_registry
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db


@tool
async def note_down(
    key: str, text: str, store: Annotated[KeyValueStore, InjectedStore], user: Annotated[ToolUser, InjectedUser]
) -> str:
    """Store a note for the current user.

    Args:
        key: Where to file the note.
        text: The note.
    """
    await store.put(key, text)
    return f"noted for {user.username}"


@pytest.fixture(autouse=True)
def note_down_is_a_code_tool(settings):
    settings.AGENTWEB_TOOL_MODULES = [__name__]
    default_registry.cache_clear()
    sync_tool_settings()
    yield
    default_registry.cache_clear()


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", password="root-password-1")


def test_it_gives_the_tried_tool_the_admins_own_store_and_name(superuser):
    client = Client()
    client.force_login(superuser)
    row = ToolSetting.objects.get(name="note_down")

    response = client.post(f"/admin/tools/toolsetting/{row.pk}/try/", {"arguments": '{"key": "k", "text": "hi"}'})

    assert response.context["result"].content == "noted for root"
    assert list(MemoryItem.objects.values_list("owner", "key", "value")) == [(superuser.pk, "k", "hi")]
