"""HTTP-tool headers at rest: one token per row (names and values), plaintext only in memory; headers that the
configured keys cannot decrypt make the tool answer with the problem, naming it, without sending anything, and
the admin still opens, keeps them, replaces them or removes them; the migration encrypts the rows from before."""

import json
import logging

import pytest
from asgiref.sync import async_to_sync
from cryptography.fernet import Fernet
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agentweb.secretbox import PREFIX, SecretBox, UnreadableSecret
from tests.tools.test_admin import (  # noqa: F401  (persona fixtures)
    client_for,
    http_tool_form,
    tool_manager,
    try_url,
    viewer,
)
from tests.tools.test_http_tool import LocalServer
from tools.admin import UNREADABLE
from tools.executor import execute_tool
from tools.models import AllowedHost, HttpTool
from tools.services import toolset_for_user

pytestmark = pytest.mark.django_db

KEY_A, KEY_C = Fernet.generate_key().decode(), Fernet.generate_key().decode()
SECRET = "hdr-secret-value-0123456789"
HEADERS = {"Authorization": f"Bearer {SECRET}", "X-Tenant": "acme"}
SCHEMA = {"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}


@pytest.fixture(autouse=True)
def key_a(settings):
    settings.AGENTWEB_SECRET_KEYS = [KEY_A]


def saved(**fields) -> HttpTool:
    values = dict(
        name="lookup",
        description="Look up an item.",
        parameters=SCHEMA,
        url_template="https://api.example.com/items/{item_id}",
        headers=HEADERS,
    )
    return HttpTool.objects.create(**{**values, **fields})


def raw_headers(row) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT headers FROM tools_httptool WHERE id = %s", [row.pk])
        return cursor.fetchone()[0]


def change_url(row) -> str:
    return f"/admin/tools/httptool/{row.pk}/change/"


def test_the_column_holds_one_token_and_the_model_reads_the_headers_back():
    row = saved()

    stored = raw_headers(row)
    assert stored.startswith(PREFIX)
    for plain in (SECRET, "Authorization", "acme"):
        assert plain not in stored
    assert json.loads(SecretBox([KEY_A.encode()]).decrypt(stored)) == HEADERS
    assert HttpTool.objects.get(pk=row.pk).headers == HEADERS


def test_a_tool_saved_in_the_admin_is_stored_encrypted(tool_manager):  # noqa: F811
    response = client_for(tool_manager).post("/admin/tools/httptool/add/", http_tool_form([("X-Api-Key", "", SECRET)]))
    assert response.status_code == 302

    row = HttpTool.objects.get(name="lookup")
    assert row.headers == {"X-Api-Key": SECRET}
    assert SECRET not in raw_headers(row)


# --- headers that cannot be decrypted ----------------------------------------------------------


@pytest.fixture
def unreadable(settings):
    """An HTTP tool whose headers were encrypted with KEY_A, read while only KEY_C is configured."""
    row = saved()
    settings.AGENTWEB_SECRET_KEYS = [KEY_C]
    row = HttpTool.objects.get(pk=row.pk)
    assert isinstance(row.headers, UnreadableSecret) and row.headers_are_unreadable
    return row


def test_the_tool_answers_with_a_message_naming_it_and_sends_nothing(settings, owner, caplog):
    AllowedHost.objects.create(host="127.0.0.1")  # the guard would let a request to the test server through
    with LocalServer() as server:
        # Made pointing at the server: a row moved there would lose its headers (agentweb/pinned_secrets.py).
        row = saved(url_template=server.base_url + "/items/{item_id}")
        settings.AGENTWEB_SECRET_KEYS = [KEY_C]
        unreadable = HttpTool.objects.get(pk=row.pk)
        assert unreadable.headers_are_unreadable
        toolset = toolset_for_user(user=owner)
        assert "lookup" in toolset.registry.names() and "lookup" not in toolset.disabled
        with caplog.at_level(logging.WARNING, logger="agentweb"):
            result = async_to_sync(execute_tool)(toolset.registry, "lookup", {"item_id": "7"})
        assert server.requests == []
    assert result.status == "error"
    assert "The headers of HTTP tool 'lookup' cannot be decrypted with AGENTWEB_SECRET_KEYS" in result.content
    assert unreadable.headers.token not in result.content + caplog.text
    assert "'lookup'" in caplog.text


def test_the_model_checks_still_pass_with_unreadable_headers(unreadable):
    unreadable.full_clean()


def test_the_admin_change_page_opens_and_says_the_headers_cannot_be_decrypted(unreadable, tool_manager, viewer):  # noqa: F811
    for user in (tool_manager, viewer):
        response = client_for(user).get(change_url(unreadable))
        assert response.status_code == 200
        page = response.content.decode()
        assert UNREADABLE in page
        assert unreadable.headers.token not in page and SECRET not in page
    assert "clear_headers" in client_for(tool_manager).get(change_url(unreadable)).content.decode()
    assert client_for(tool_manager).get("/admin/tools/httptool/").status_code == 200
    assert client_for(tool_manager).get(try_url(unreadable)).status_code == 200


def test_a_save_without_headers_keeps_them_as_they_are(unreadable, tool_manager):  # noqa: F811
    token = unreadable.headers.token
    response = client_for(tool_manager).post(change_url(unreadable), http_tool_form(description="Changed."))
    assert response.status_code == 302, response.content.decode()[:3000]

    assert raw_headers(unreadable) == token
    assert HttpTool.objects.get(pk=unreadable.pk).description == "Changed."


def test_typed_headers_replace_them_and_remove_drops_them(unreadable, tool_manager):  # noqa: F811
    client = client_for(tool_manager)
    response = client.post(change_url(unreadable), http_tool_form([("X-Api-Key", "", "new-secret-value")]))
    assert response.status_code == 302
    assert HttpTool.objects.get(pk=unreadable.pk).headers == {"X-Api-Key": "new-secret-value"}

    HttpTool.objects.filter(pk=unreadable.pk).update(headers=UnreadableSecret(unreadable.headers.token))
    response = client.post(change_url(unreadable), http_tool_form(clear_headers="on"))
    assert response.status_code == 302
    assert HttpTool.objects.get(pk=unreadable.pk).headers == {}


def test_a_header_typed_without_a_value_is_refused_rather_than_guessed(unreadable, tool_manager):  # noqa: F811
    response = client_for(tool_manager).post(change_url(unreadable), http_tool_form([("X-Api-Key", "", "")]))
    assert response.status_code == 200
    assert raw_headers(unreadable) == unreadable.headers.token


# --- the migration ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_migration_encrypts_plaintext_headers_and_its_reverse_decrypts_them():
    before, after = ("tools", "0002_approval_rules"), ("tools", "0003_encrypt_headers")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO tools_httptool (name, description, parameters, method, url_template, headers, "
                "body_template, enabled, requires_approval, allow_approve, allow_edit, allow_reject, allow_respond, "
                "created_at, updated_at) VALUES ('old', 'd', '{}', 'GET', 'https://a.example/', %s, '', true, false, "
                "true, true, true, true, '2026-01-01', '2026-01-01')",
                [json.dumps(HEADERS)],
            )
        executor = MigrationExecutor(connection)
        executor.migrate([after])
        row = HttpTool.objects.get(name="old")
        assert SECRET not in raw_headers(row)
        assert json.loads(SecretBox([KEY_A.encode()]).decrypt(raw_headers(row))) == HEADERS
        assert row.headers == HEADERS

        executor = MigrationExecutor(connection)
        executor.migrate([before])
        assert json.loads(raw_headers(row)) == HEADERS
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
