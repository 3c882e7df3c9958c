"""Each person connects to an OAuth-protected MCP server of the SDK (its own authorization server, run as a process):
their calls carry their own token, an expired token is refreshed, a revoked one asks them to connect again."""

import asyncio
import threading
import time

import pytest

from audit.models import Event
from mcpconnect.models import McpConnection
from mcpconnect.signals import mcp_connection_changed
from tests.support.mcp_servers.running import OAuthServer

from .conftest import browser, call, connect_oauth, page_messages, per_person_row

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def signals():
    seen = []

    def receiver(sender, user, server, action, **kwargs):
        seen.append((user.get_username(), server, action))

    mcp_connection_changed.connect(receiver)
    yield seen
    mcp_connection_changed.disconnect(receiver)


def test_two_people_connect_with_their_own_accounts_and_each_call_carries_their_token(
    oauth_server, people, record, signals
):
    alice, bob = people
    per_person_row(oauth_server)
    shown = connect_oauth(browser(alice), oauth_server, "ann")
    assert "Connected to srv. A chat waiting for it goes on by itself." in page_messages(shown)
    connect_oauth(browser(bob), oauth_server, "ben")

    first, second, third = call(alice), call(bob), call(alice)
    assert (first.status, first.content) == ("success", "you are ann")
    assert (second.status, second.content) == ("success", "you are ben")
    assert third.content == "you are ann"
    assert record.read_text().split("\n")[:3] == ["whoami ann", "whoami ben", "whoami ann"]
    assert oauth_server.stats()["registrations"] == 2  # dynamic client registration, once per person
    assert signals == [("alice", "srv", "connect"), ("bob", "srv", "connect")]


def test_tokens_are_stored_encrypted(oauth_server, people):
    from django.db import connection

    alice, _ = people
    per_person_row(oauth_server)
    connect_oauth(browser(alice), oauth_server, "ann")
    with connection.cursor() as cursor:
        cursor.execute("SELECT tokens, client_info FROM mcpconnect_mcpconnection")
        tokens, client_info = cursor.fetchone()
    assert tokens.startswith("fernet:") and client_info.startswith("fernet:")
    assert "at-" not in tokens and "rt-" not in tokens
    assert McpConnection.objects.get().tokens["access_token"].startswith("at-")


def test_a_person_who_has_not_connected_is_told_to_and_nobody_elses_token_is_used(oauth_server, people, record):
    alice, bob = people
    per_person_row(oauth_server)
    connect_oauth(browser(alice), oauth_server, "ann")
    result = call(bob)
    assert result.status == "error"
    assert "has not connected" in result.content and "Connect" in result.content
    assert "whoami" not in record.read_text()


def test_the_card_asks_and_the_call_goes_on_once_the_person_has_connected(oauth_server, people, record):
    alice, _ = people
    per_person_row(oauth_server)
    connect_oauth(browser(alice), oauth_server, "ann")  # the tools become known
    McpConnection.objects.all().delete()
    asked = []
    tab = browser(alice)

    async def connect(server, mode, check):
        asked.append((server, mode))
        # The person follows the card's link in another tab and signs in; the call notices by itself.
        worker = threading.Thread(target=connect_oauth, args=(tab, oauth_server, "ann"))
        worker.start()
        for _ in range(300):
            if await check():
                return True
            await asyncio.sleep(0.1)
        return False

    result = call(alice, connect=connect)
    assert asked == [("srv", "oauth")]
    assert (result.status, result.content) == ("success", "you are ann")


def test_an_expired_token_is_refreshed_before_it_is_sent(record, people, connections):
    server = OAuthServer(record, token_seconds=4).start()
    try:
        alice, _ = people
        per_person_row(server)
        connect_oauth(browser(alice), server, "ann")
        before = McpConnection.objects.get().tokens["access_token"]
        assert call(alice).content == "you are ann"
        time.sleep(2.5)  # past the refresh point (half the token's life here), before its expiry
        connections.forget_person("srv", alice.pk)  # as another process would: only the stored token
        assert call(alice).content == "you are ann"
        time.sleep(4.5)  # past its expiry: the connection kept in this process refreshes it too
        assert call(alice).content == "you are ann"
        stats = server.stats()
        assert stats["refreshes"] >= 2
        assert stats["refused"] == 0  # no expired token was ever sent
        assert McpConnection.objects.get().tokens["access_token"] != before
    finally:
        server.stop()


def test_a_revoked_token_makes_the_card_ask_again(oauth_server, people, record, signals):
    alice, _ = people
    per_person_row(oauth_server)
    connect_oauth(browser(alice), oauth_server, "ann")
    assert call(alice).content == "you are ann"
    oauth_server.revoke("ann")
    asked = []

    async def decline(server, mode, check):
        asked.append(server)
        return False

    result = call(alice, connect=decline)
    assert asked == ["srv"]
    assert result.status == "error" and "did not connect" in result.content
    row = McpConnection.objects.get()
    assert not row.connected and row.tokens is None
    assert signals[-1] == ("alice", "srv", "revoke")
    connect_oauth(browser(alice), oauth_server, "ann")
    assert call(alice).content == "you are ann"


def test_disconnect_and_deactivation_remove_the_tokens(oauth_server, people, signals):
    alice, bob = people
    per_person_row(oauth_server)
    client = browser(alice)
    connect_oauth(client, oauth_server, "ann")
    connect_oauth(browser(bob), oauth_server, "ben")
    page = client.get("/mcp/connections/")
    assert b"Connected" in page.content and b"at-" not in page.content
    client.post("/mcp/connections/srv/disconnect")
    assert not McpConnection.objects.filter(user=alice).exists()
    assert "has not connected" in call(alice).content
    bob.is_active = False
    bob.save()
    assert not McpConnection.objects.filter(user=bob).exists()
    assert ("alice", "srv", "disconnect") in signals and ("bob", "srv", "disconnect") in signals
    # ...and the audit log has each person's connection and its end (mcpconnect's signal, audit's receiver)
    logged = set(Event.objects.filter(action__startswith="mcp.").values_list("actor_name", "action", "target_label"))
    assert logged == {
        ("alice", "mcp.connected", "srv"),
        ("bob", "mcp.connected", "srv"),
        ("alice", "mcp.disconnected", "srv"),
        ("bob", "mcp.disconnected", "srv"),
    }


def test_a_callback_for_another_person_is_refused(oauth_server, people):
    alice, bob = people
    per_person_row(oauth_server)
    started = browser(alice).post("/mcp/connections/srv/connect")
    back = oauth_server.sign_in(started["Location"], "ann")
    path = back.split("localhost:8000", 1)[1]
    shown = browser(bob).get(path, follow=True)
    assert any("not started by you" in m for m in page_messages(shown))
    assert not McpConnection.objects.filter(connected=True).exists()
