"""An open socket follows the account: logging out, deactivation and floods all count."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.sessions.models import Session

from chat.models import Message
from chat.ratelimit import RateLimiter

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_socket_stops_working_once_its_session_is_logged_out(connect, owner):
    client = await connect(owner)
    await Session.objects.all().adelete()
    await client.ask("still there?")
    assert await client.communicator.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}
    assert not await Message.objects.aexists()


async def test_a_socket_whose_session_ended_is_not_sent_its_thread(connect, owner):
    client = await connect(owner)
    await client.ask("hello")
    thread = (await client.run_to_end())[-1]["thread"]
    await Session.objects.all().adelete()

    await client.send(type="thread.subscribe", thread=thread, after_seq=0)

    assert await client.communicator.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}


async def test_a_socket_stops_working_once_the_account_is_deactivated(connect, owner):
    client = await connect(owner)
    owner.is_active = False
    await sync_to_async(owner.save)()
    await client.ask("still there?")
    assert await client.communicator.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}
    assert not await Message.objects.aexists()


async def test_too_many_messages_in_a_burst_are_refused(connect, owner, settings, monkeypatch):
    from chat import consumers

    monkeypatch.setattr(consumers, "SEND_LIMIT", RateLimiter(per_minute=1, burst=1))
    client = await connect(owner)
    await client.ask("one")
    thread = (await client.run_to_end())[0]["thread"]
    await client.ask("two", thread=thread)
    assert (await client.receive())["code"] == "rate_limited"
    assert await Message.objects.filter(role="user").acount() == 1


def test_the_bucket_refills_with_time():
    limiter = RateLimiter(per_minute=60, burst=2)
    assert [limiter.allow("u", now=0), limiter.allow("u", now=0), limiter.allow("u", now=0)] == [True, True, False]
    assert limiter.allow("u", now=1.0)
    assert limiter.allow("other", now=0)


async def signed_in_socket(user):
    """A browser session of `user` (its HTTP client, to sign out with) and a socket opened in it."""
    from django.conf import settings
    from django.test import Client as HttpClient

    from tests.chat.conftest import Client

    http = HttpClient()
    await sync_to_async(http.force_login)(user)
    cookie = f"{settings.SESSION_COOKIE_NAME}={http.cookies[settings.SESSION_COOKIE_NAME].value}"
    return http, await Client(cookie.encode()).connect()


async def test_signing_out_closes_that_sessions_open_sockets_at_once(owner):
    http, signed_out = await signed_in_socket(owner)
    _, other_device = await signed_in_socket(owner)

    await sync_to_async(http.post)("/accounts/logout/")

    assert await signed_out.communicator.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}
    assert await other_device.communicator.receive_nothing(timeout=0.3)
    await other_device.close()


async def test_deactivating_the_account_closes_its_open_sockets_at_once(connect, owner):
    client = await connect(owner)

    owner.is_active = False
    await sync_to_async(owner.save)()

    assert await client.communicator.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}
