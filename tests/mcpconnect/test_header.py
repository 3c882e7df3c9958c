"""Each person enters their own key for an MCP server (sent as a header): tried before it is kept, encrypted, and
sent only with that person's calls."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection

from mcpconnect.models import McpConnection

from .conftest import browser, call, page_messages, per_person_row

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_persons_key_goes_with_their_calls_only(oauth_server, people, record):
    alice, bob = people
    per_person_row(oauth_server, per_person="header", person_header="Authorization")
    shown = browser(alice).post("/mcp/connections/srv/connect", {"value": "Bearer key-ann"}, follow=True)
    assert "Connected to srv." in page_messages(shown)
    browser(bob).post("/mcp/connections/srv/connect", {"value": "Bearer key-ben"})

    assert call(alice).content == "you are ann"
    assert call(bob).content == "you are ben"
    assert call(alice).content == "you are ann"
    assert record.read_text().split() == ["whoami", "ann", "whoami", "ben", "whoami", "ann"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT header_value FROM mcpconnect_mcpconnection")
        assert all(value.startswith("fernet:") and "key-" not in value for (value,) in cursor.fetchall())


def test_a_key_the_server_refuses_is_not_kept(oauth_server, people):
    alice, _ = people
    per_person_row(oauth_server, per_person="header", person_header="Authorization")
    shown = browser(alice).post("/mcp/connections/srv/connect", {"value": "Bearer wrong"}, follow=True)
    assert "MCP server 'srv' refused this key." in page_messages(shown)
    assert not McpConnection.objects.exists()
    shown = browser(alice).post("/mcp/connections/srv/connect", {"value": "two\nlines"}, follow=True)
    assert any("one line" in m for m in page_messages(shown))
    assert not McpConnection.objects.exists()
    assert b"Bearer wrong" not in browser(alice).get("/mcp/connections/").content


def test_a_person_without_a_key_is_asked_for_one(oauth_server, people):
    alice, bob = people
    per_person_row(oauth_server, per_person="header", person_header="Authorization")
    browser(alice).post("/mcp/connections/srv/connect", {"value": "Bearer key-ann"})
    asked = []

    async def connect(server, mode, check):
        asked.append((server, mode))
        return False

    result = call(bob, connect=connect)
    assert asked == [("srv", "header")]
    assert result.status == "error" and "did not connect" in result.content


def test_a_server_for_a_group_is_neither_listed_nor_connected_to_by_anyone_else(oauth_server, people):
    alice, bob = people
    research = Group.objects.create(name="research")
    alice.groups.add(research)
    per_person_row(oauth_server, per_person="header", person_header="Authorization").groups.add(research)

    assert b"srv" in browser(alice).get("/mcp/connections/").content
    assert b"srv" not in browser(bob).get("/mcp/connections/").content
    refused = browser(bob).post("/mcp/connections/srv/connect", {"value": "Bearer key-ben"}, follow=True)
    assert "There is no MCP server 'srv' to connect to." in page_messages(refused)
    assert not McpConnection.objects.exists()
    browser(alice).post("/mcp/connections/srv/connect", {"value": "Bearer key-ann"})
    assert list(McpConnection.objects.values_list("user__username", flat=True)) == ["alice"]
