"""A run tells the notifications app (chat/notify.py): a tool's request for input, and its end when nobody watched it
start: a run a trigger or a schedule started that completes is told to its owner; a run typed in a tab is not."""

import asyncio
import time
import uuid

import pytest
from django.apps import apps

from chat.caller import Caller
from chat.models import Source
from chat.runs.start import begin_turn, launch_run
from notifications.models import Preference
from tests.chat.test_runs_with_model_server import answer, calls
from tests.notifications.receivers import SMTPServer
from tools.models import bump_settings_stamp
from tools.registry import default_registry
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def mailbox(owner, settings):
    owner.email = "owner@example.com"
    owner.save()
    Preference.objects.create(user=owner, email=True)
    settings.AGENTWEB_NOTIFY_WINDOW = 0.2
    settings.AGENTWEB_PUBLIC_URL = "https://agentweb.example"
    with SMTPServer() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
        yield server.mailbox


async def run_to_its_end(owner, source: str):
    turn, setup = await begin_turn(
        user=owner,
        session_key=None,
        thread_id=None,
        content="the nightly summary",
        client_msg_id=uuid.uuid4(),
        caller=Caller(current=lambda: owner, source=source),
    )
    active = await launch_run(turn, setup=setup)
    await active.task
    assert apps.get_app_config("notifications").dispatcher.wait_idle()
    return turn.thread


@pytest.mark.parametrize("source", [Source.TRIGGER, Source.SCHEDULE])
async def test_a_run_nobody_watched_start_tells_its_owner_it_finished(owner, mailbox, source):
    thread = await run_to_its_end(owner, source)
    [message] = mailbox.messages
    assert message["Subject"] == "[agentweb] A scheduled or triggered run finished"
    assert f"https://agentweb.example/t/{thread.pk}/" in message.get_content()


async def test_a_run_typed_in_a_tab_tells_nobody_it_finished(owner, mailbox):
    await run_to_its_end(owner, Source.CHAT)
    assert mailbox.messages == []


@pytest.fixture
def tools_for_tests(settings):
    settings.AGENTWEB_TOOL_MODULES = ["tests.support.tools_for_tests"]
    default_registry.cache_clear()
    sync_tool_settings()
    bump_settings_stamp()
    yield
    default_registry.cache_clear()


async def test_a_tools_request_for_input_is_told_without_what_it_asks(
    connect, owner, model_server, mailbox, tools_for_tests
):
    model_server.enqueue(calls(("c1", "ask_for_details", {"purpose": "the secret merger"})), answer("Thanks."))
    client = await connect(owner)
    await client.ask("sign me up")
    asked = (await client.until("tool_call.input_requested"))[-1]
    deadline = time.monotonic() + 10
    while not mailbox.messages and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    [message] = mailbox.messages
    assert message["Subject"] == "[agentweb] ask_for_details asks for your input"
    body = message.get_content()
    assert "https://agentweb.example/inbox" in body and "secret merger" not in body
    await client.send(
        type="tool_call.input", thread=asked["thread"], tool_call=asked["tool_call"], request=asked["request"],
        action="cancel",
    )  # fmt: skip
    await client.run_to_end()
