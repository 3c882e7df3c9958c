"""An open socket follows the account: logging out, deactivation and floods all count."""

import pytest
from asgiref.sync import sync_to_async
from django.apps import apps
from django.contrib.sessions.models import Session

from chat.models import Message, Run, ToolCall
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
    monkeypatch.setattr(apps.get_app_config("chat"), "send_limit", RateLimiter(per_minute=1, burst=1))
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


def limit_sends(monkeypatch, burst: int) -> None:
    monkeypatch.setattr(apps.get_app_config("chat"), "send_limit", RateLimiter(per_minute=1, burst=burst))


async def test_stop_and_retry_over_and_over_is_limited_as_sending_is(connect, owner, model_server, monkeypatch):
    """Each retry is a model request: a Stop-then-Retry loop spends the same bucket as message.send."""
    from tests.support.model_server import ErrorResponse

    limit_sends(monkeypatch, burst=3)
    for _ in range(4):
        model_server.enqueue(ErrorResponse(500, {"error": {"message": "busy"}}))
    client = await connect(owner)
    await client.ask("hello")
    thread = (await client.run_to_end())[0]["thread"]
    for _ in range(2):
        await client.send(type="run.retry", thread=thread)
        assert (await client.run_to_end())[-1]["type"] == "run.failed"

    await client.send(type="run.retry", thread=thread)

    assert (await client.receive())["code"] == "rate_limited"
    assert len(model_server.requests) == 3
    assert await Run.objects.acount() == 3


async def test_the_decision_that_resumes_a_run_takes_a_send_token(
    connect, owner, monkeypatch, calculator_needs_approval
):
    limit_sends(monkeypatch, burst=1)
    client = await connect(owner)
    await client.ask("what is 23*19?")
    awaiting = next(e for e in await client.until("run.waiting") if e["type"] == "tool_call.awaiting_approval")

    await client.send(type="tool_call.decide", tool_call=awaiting["tool_call"], decision="approve")

    assert (await client.receive())["code"] == "rate_limited"
    call = await ToolCall.objects.aget()
    assert (call.status, (await Run.objects.aget()).status) == ("awaiting_approval", "waiting")


async def test_a_decision_that_resumes_nothing_costs_no_send_token(
    connect, owner, model_server, monkeypatch, calculator_needs_approval
):
    from tests.chat.test_runs_with_model_server import answer, calls

    limit_sends(monkeypatch, burst=2)
    model_server.enqueue(
        calls(("c1", "calculator", {"expression": "1+1"}), ("c2", "calculator", {"expression": "2+2"}))
    )
    model_server.enqueue(answer("2 and 4"))
    client = await connect(owner)
    await client.ask("two sums")
    waiting = [e["tool_call"] for e in await client.until("run.waiting") if e["type"] == "tool_call.awaiting_approval"]

    for tool_call in waiting:  # the first resumes nothing; the second resumes the run
        await client.send(type="tool_call.decide", tool_call=tool_call, decision="approve")

    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert len(model_server.requests) == 2


async def test_a_person_holds_at_most_the_cap_of_sockets_and_one_more_is_closed_with_4429(
    connect, owner, stranger, settings
):
    settings.AGENTWEB_MAX_SOCKETS_PER_USER = 3
    held = [await connect(owner) for _ in range(3)]

    extra = await connect(owner)

    assert await extra.communicator.receive_output(timeout=2) == {"type": "websocket.close", "code": 4429}
    await held[0].send(type="ping")  # the sockets held are served as before
    assert (await held[0].receive())["type"] == "pong"
    other = await connect(stranger)  # the cap is per person
    await other.send(type="ping")
    assert (await other.receive())["type"] == "pong"


async def test_a_closed_socket_frees_its_place_under_the_cap(connect, owner, settings):
    settings.AGENTWEB_MAX_SOCKETS_PER_USER = 2
    first, _ = await connect(owner), await connect(owner)
    await first.close()

    again = await connect(owner)

    await again.send(type="ping")
    assert (await again.receive())["type"] == "pong"
