"""A configuration's API key (and its base URL's password) stay with the server they were entered for: pointing the
configuration elsewhere clears them, whoever does it and however (the admin, a QuerySet, bulk_update)."""

import asyncio

import pytest

from modelconfig.models import ModelConfiguration
from providers.config import build_provider
from tests.providers.test_openai import collect
from tests.support.model_server import ScriptedModelServer, SSEResponse, openai_sse_body

from .conftest import SECRET
from .test_admin import change_url, client_for, form_data, staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def elsewhere():
    """A model server of the person who changes the configuration: it records what it is sent."""
    with ScriptedModelServer() as server:
        server.enqueue(SSEResponse(openai_sse_body(text="hi")))
        yield server


def sent_to(server, row) -> dict:
    """The headers of one request a run on ``row`` sends to ``server``."""
    row.refresh_from_db()
    asyncio.run(collect(build_provider(row.to_config())))
    return server.requests[-1]["headers"]


def test_staff_who_point_a_configuration_at_their_host_are_not_sent_its_key(make_row, elsewhere):
    row = make_row()
    client = client_for(staff("changer", "view_modelconfiguration", "change_modelconfiguration"))
    response = client.post(change_url(row), form_data(base_url=elsewhere.base_url), follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    assert (
        "now points at another server" in page
        and "Cleared, since a secret is sent only where it was entered: its stored API key." in page
    )
    assert "Authorization" not in sent_to(elsewhere, row)
    assert row.api_key == ""


def test_a_new_path_on_the_same_server_keeps_the_key(make_row):
    row = make_row(base_url="http://127.0.0.1:9/v1")
    admin = client_for(staff("changer", "view_modelconfiguration", "change_modelconfiguration"))
    response = admin.post(change_url(row), form_data(base_url="HTTP://127.0.0.1:9/openai/v1"), follow=True)
    assert "now points at another server" not in response.content.decode()
    row.refresh_from_db()
    assert row.api_key == SECRET


def test_a_key_typed_again_with_the_new_address_is_kept(make_row, elsewhere):
    row = make_row()
    admin = client_for(staff("changer", "view_modelconfiguration", "change_modelconfiguration"))
    response = admin.post(change_url(row), form_data(base_url=elsewhere.base_url, api_key=SECRET), follow=True)
    assert "now points at another server" not in response.content.decode()
    assert sent_to(elsewhere, row)["Authorization"] == f"Bearer {SECRET}"


def test_a_base_url_password_left_hidden_does_not_follow_a_new_host(make_row, elsewhere):
    row = make_row(base_url="http://alice:pa55-w0rd@127.0.0.1:9/v1")
    admin = client_for(staff("changer", "view_modelconfiguration", "change_modelconfiguration"))
    moved = elsewhere.base_url.replace("http://", "http://alice:••••@")
    response = admin.post(change_url(row), form_data(base_url=moved), follow=True)
    assert "its stored API key and base URL password." in response.content.decode()
    assert "Authorization" not in sent_to(elsewhere, row)
    assert row.base_url == elsewhere.base_url


def test_another_api_with_a_blank_base_url_is_another_server(make_row):
    row = make_row(base_url="")
    ModelConfiguration.objects.filter(pk=row.pk).update(api="anthropic")
    row.refresh_from_db()
    assert row.api_key == ""


def test_a_queryset_update_and_bulk_update_clear_the_key_of_rows_they_move(make_row):
    moved, stays = make_row(name="moved"), make_row(name="stays", base_url="http://elsewhere.example/v1")
    count = ModelConfiguration.objects.update(base_url="http://elsewhere.example/v2")
    assert count == 2
    assert ModelConfiguration.objects.get(pk=moved.pk).api_key == ""
    assert ModelConfiguration.objects.get(pk=stays.pk).api_key == SECRET

    row = make_row(name="bulk")
    row = ModelConfiguration.objects.get(pk=row.pk)
    row.base_url = "https://attacker.example/v1"
    ModelConfiguration.objects.bulk_update([row], ["base_url"])
    assert ModelConfiguration.objects.get(pk=row.pk).api_key == ""


def test_an_update_that_gives_the_key_with_the_address_keeps_it(make_row):
    row = make_row()
    ModelConfiguration.objects.filter(pk=row.pk).update(base_url="https://new.example/v1", api_key="sk-new-key-123")
    assert ModelConfiguration.objects.get(pk=row.pk).api_key == "sk-new-key-123"
    ModelConfiguration.objects.update_or_create(
        name=row.name, defaults={"base_url": "https://newer.example/v1", "api_key": "sk-new-key-123"}
    )
    assert ModelConfiguration.objects.get(pk=row.pk).api_key == "sk-new-key-123"


def test_a_save_with_only_the_address_in_update_fields_clears_the_key(make_row):
    row = ModelConfiguration.objects.get(pk=make_row().pk)
    row.base_url = "https://attacker.example/v1"
    row.save(update_fields=["base_url"])
    assert row.cleared_secrets == ["api_key"]
    assert ModelConfiguration.objects.get(pk=row.pk).api_key == ""
